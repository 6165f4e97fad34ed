/*
 * report_loop: the durable write without the accessory's round trip. A lamp, written with the C SDK,
 * is paired into a new home and then reports its own value changes (home.v1.AccessoryLink/
 * ReportValues), one at a time on one connection: each report changes the On characteristic, so each
 * is a cache update, an event and an fsynced commit before its answer, like a controller's
 * WriteCharacteristic after the accessory accepted it. bench/report-vs-redis.sh compares it with
 * Redis's SET under appendfsync always.
 *
 *   report_loop ENDPOINT TOKEN-FILE SECONDS WARMUP-SECONDS
 *
 * Prints one line: reports answered per second over SECONDS after WARMUP-SECONDS.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: report_loop ENDPOINT TOKEN-FILE SECONDS WARMUP-SECONDS\n");
        return 64;
    }
    char token[512];
    FILE *file = fopen(argv[2], "r");
    if (!file || !fgets(token, sizeof token, file)) {
        fprintf(stderr, "cannot read %s\n", argv[2]);
        return 64;
    }
    fclose(file);
    token[strcspn(token, "\r\n")] = '\0';
    double seconds = atof(argv[3]), warmup = atof(argv[4]);
    homerpc_status status = {0};
    homerpc_client *controller = connect_to(argv[1], token);
    homerpc_client *link = connect_to(argv[1], NULL);

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

    /* Reports, each a change: On alternates. */
    Home__V1__CharacteristicValue value = HOME__V1__CHARACTERISTIC_VALUE__INIT;
    value.kind_case = HOME__V1__CHARACTERISTIC_VALUE__KIND_BOOL_VALUE;
    Home__V1__ValueReport report = HOME__V1__VALUE_REPORT__INIT;
    report.characteristic_id = lamp->services[0]->characteristics[0]->id;
    report.value = &value;
    Home__V1__ValueReport *reports[] = {&report};
    Home__V1__ReportValuesRequest request = HOME__V1__REPORT_VALUES_REQUEST__INIT;
    request.n_reports = 1;
    request.reports = reports;
    double start = now(), window_start = start + warmup, window_end = window_start + seconds;
    long long counted = 0;
    for (long long i = 0;; i++) {
        double t = now();
        if (t >= window_end) break;
        value.bool_value = (protobuf_c_boolean)(i & 1);
        ProtobufCMessage *response = NULL;
        if (homerpc_call(link, "home.v1.AccessoryLink/ReportValues", &request.base,
                         &home__v1__report_values_response__descriptor, &response, 5000, NULL, &status))
            fail("ReportValues", &status);
        protobuf_c_message_free_unpacked(response, NULL);
        if (t >= window_start) counted++;
    }
    printf("%.0f\n", (double)counted / seconds);
    protobuf_c_message_free_unpacked(&advertised->base, NULL);
    protobuf_c_message_free_unpacked(&home->base, NULL);
    homerpc_stream_close(stream);
    homerpc_close(link);
    homerpc_close(controller);
    return 0;
}
