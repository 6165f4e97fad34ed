/*
 * report_loop: the durable write without the accessory's round trip. A lamp, written with the C SDK,
 * is paired into a new home and then reports its own value changes (home.v1.AccessoryLink/
 * ReportValues), one at a time on one connection: each report changes the On characteristic, so each
 * is a cache update, an event and an fsynced commit before its answer, like a controller's
 * WriteCharacteristic after the accessory accepted it. With `redis`, the same loop sends Redis a
 * SET instead (alternating values too), so that one client loads both servers the same way: one
 * call at a time on one connection, each a write, a poll and a read. bench/report-vs-redis.sh runs
 * both against Redis under appendfsync always.
 *
 *   report_loop homed ENDPOINT TOKEN-FILE SECONDS WARMUP-SECONDS
 *   report_loop redis HOST PORT SECONDS WARMUP-SECONDS
 *
 * Prints one line: calls answered per second over SECONDS after WARMUP-SECONDS.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "home/v1/accessory_link.pb-c.h"
#include "home/v1/home_service.pb-c.h"
#include "homerpc.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fail(const char *what, const homerpc_status *status) {
    fprintf(stderr, "%s: %s: %s\n", what, homerpc_code_name(status->code), status->message);
    exit(1);
}

static homerpc_client *connect_to(const char *endpoint, const char *token) {
    homerpc_status status = {0};
    homerpc_client *client = homerpc_connect(endpoint, token, &status);
    if (!client) fail("connect", &status);
    return client;
}

/* Runs `call` (the i-th call) one at a time until SECONDS after WARMUP have passed; returns the
 * calls per second answered in that window. */
static double measure(double seconds, double warmup, void (*call)(void *context, long long i), void *context) {
    double start = now(), window_start = start + warmup, window_end = window_start + seconds;
    long long counted = 0;
    for (long long i = 0;; i++) {
        double t = now();
        if (t >= window_end) break;
        call(context, i);
        if (t >= window_start) counted++;
    }
    return (double)counted / seconds;
}

/* ---- homed: an accessory's value reports ---- */

struct reporter {
    homerpc_client *link;
    Home__V1__CharacteristicValue value;
    Home__V1__ValueReport report;
    Home__V1__ValueReport *reports[1];
    Home__V1__ReportValuesRequest request;
};

static void report_once(void *context, long long i) {
    struct reporter *reporter = context;
    reporter->value.bool_value = (protobuf_c_boolean)(i & 1); /* each report a change */
    homerpc_status status = {0};
    ProtobufCMessage *response = NULL;
    if (homerpc_call(reporter->link, "home.v1.AccessoryLink/ReportValues", &reporter->request.base,
                     &home__v1__report_values_response__descriptor, &response, 5000, NULL, &status))
        fail("ReportValues", &status);
    protobuf_c_message_free_unpacked(response, NULL);
}

static int run_homed(const char *endpoint, const char *token_file, double seconds, double warmup) {
    char token[512];
    FILE *file = fopen(token_file, "r");
    if (!file || !fgets(token, sizeof token, file)) {
        fprintf(stderr, "cannot read %s\n", token_file);
        return 64;
    }
    fclose(file);
    token[strcspn(token, "\r\n")] = '\0';
    homerpc_status status = {0};
    homerpc_client *controller = connect_to(endpoint, token);
    homerpc_client *link = connect_to(endpoint, NULL);
    char home_name[64];
    snprintf(home_name, sizeof home_name, "Report Bench %d", (int)getpid());
    Home__V1__AddHomeRequest add_home = HOME__V1__ADD_HOME_REQUEST__INIT;
    add_home.name = home_name;
    Home__V1__AddHomeResponse *home = NULL;
    if (homerpc_call(controller, "home.v1.HomeService/AddHome", &add_home.base, &home__v1__add_home_response__descriptor,
                     (ProtobufCMessage **)&home, 5000, NULL, &status))
        fail("AddHome", &status);

    /* The lamp advertises itself; the controller adds it with its setup code. */
    Home__V1__CharacteristicDescription on = HOME__V1__CHARACTERISTIC_DESCRIPTION__INIT;
    on.type = "00000025-0000-1000-8000-0026BB765291";
    Home__V1__CharacteristicDescription *characteristics[] = {&on};
    Home__V1__ServiceDescription bulb = HOME__V1__SERVICE_DESCRIPTION__INIT;
    bulb.type = "00000043-0000-1000-8000-0026BB765291";
    bulb.n_characteristics = 1;
    bulb.characteristics = characteristics;
    Home__V1__ServiceDescription *services[] = {&bulb};
    Home__V1__AccessoryDescription description = HOME__V1__ACCESSORY_DESCRIPTION__INIT;
    description.name = "Report Lamp";
    description.n_services = 1;
    description.services = services;
    Home__V1__AdvertiseRequest advertise = HOME__V1__ADVERTISE_REQUEST__INIT;
    advertise.accessory = &description;
    advertise.setup_code = "284-91-735";
    homerpc_stream *stream = homerpc_stream_open(link, "home.v1.AccessoryLink/Advertise", &advertise.base,
                                                 &home__v1__link_message__descriptor, 0, &status);
    if (!stream) fail("Advertise", &status);
    Home__V1__LinkMessage *advertised = NULL;
    if (homerpc_stream_next(stream, (ProtobufCMessage **)&advertised, 5000, &status) != HOMERPC_NEXT_MESSAGE ||
        advertised->kind_case != HOME__V1__LINK_MESSAGE__KIND_ADVERTISED)
        fail("Advertise: no advertised message", &status);
    Home__V1__AccessoryDescription *lamp = advertised->advertised->accessory;
    Home__V1__AddAccessoryRequest add = HOME__V1__ADD_ACCESSORY_REQUEST__INIT;
    add.home_id = home->home->id;
    add.accessory_id = lamp->id;
    add.setup_code = "284-91-735";
    ProtobufCMessage *added = NULL;
    if (homerpc_call(controller, "home.v1.HomeService/AddAccessory", &add.base,
                     &home__v1__add_accessory_response__descriptor, &added, 5000, NULL, &status))
        fail("AddAccessory", &status);
    protobuf_c_message_free_unpacked(added, NULL);

    struct reporter reporter = {.link = link};
    reporter.value = (Home__V1__CharacteristicValue)HOME__V1__CHARACTERISTIC_VALUE__INIT;
    reporter.value.kind_case = HOME__V1__CHARACTERISTIC_VALUE__KIND_BOOL_VALUE;
    reporter.report = (Home__V1__ValueReport)HOME__V1__VALUE_REPORT__INIT;
    reporter.report.characteristic_id = lamp->services[0]->characteristics[0]->id;
    reporter.report.value = &reporter.value;
    reporter.reports[0] = &reporter.report;
    reporter.request = (Home__V1__ReportValuesRequest)HOME__V1__REPORT_VALUES_REQUEST__INIT;
    reporter.request.n_reports = 1;
    reporter.request.reports = reporter.reports;
    printf("%.0f\n", measure(seconds, warmup, report_once, &reporter));
    protobuf_c_message_free_unpacked(&advertised->base, NULL);
    protobuf_c_message_free_unpacked(&home->base, NULL);
    homerpc_stream_close(stream);
    homerpc_close(link);
    homerpc_close(controller);
    return 0;
}

/* ---- Redis: SET, answered +OK ---- */

static void set_once(void *context, long long i) {
    int fd = *(int *)context;
    const char *command = (i & 1) ? "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1\r\n1\r\n"
                                  : "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$1\r\n0\r\n";
    if (send(fd, command, strlen(command), MSG_NOSIGNAL) != (ssize_t)strlen(command)) {
        perror("send");
        exit(1);
    }
    char reply[64];
    size_t got = 0;
    while (got < 5) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        ssize_t n = poll(&p, 1, 5000) == 1 ? recv(fd, reply + got, sizeof reply - got, 0) : -1;
        if (n <= 0) {
            fprintf(stderr, "no answer to SET\n");
            exit(1);
        }
        got += (size_t)n;
    }
    if (memcmp(reply, "+OK\r\n", 5) != 0) {
        fprintf(stderr, "SET answered %.*s\n", (int)got, reply);
        exit(1);
    }
}

static int run_redis(const char *host, int port, double seconds, double warmup) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0 || inet_pton(AF_INET, host, &address.sin_addr) != 1 ||
        connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        return 1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    printf("%.0f\n", measure(seconds, warmup, set_once, &fd));
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "homed") == 0) return run_homed(argv[2], argv[3], atof(argv[4]), atof(argv[5]));
    if (argc == 6 && strcmp(argv[1], "redis") == 0) return run_redis(argv[2], atoi(argv[3]), atof(argv[4]), atof(argv[5]));
    fprintf(stderr, "usage: report_loop homed ENDPOINT TOKEN-FILE SECONDS WARMUP-SECONDS\n"
                    "       report_loop redis HOST PORT SECONDS WARMUP-SECONDS\n");
    return 64;
}
