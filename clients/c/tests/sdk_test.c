/*
 * sdk_test: the C SDK against a running homed, as a C service would use it.
 *
 *   sdk-test ENDPOINT TOKEN-FILE [UNIX-SOCKET-PATH [KEEPALIVE-SECONDS]]
 *   sdk-test --drain ENDPOINT TOKEN-FILE HOMED-PID
 *   sdk-test --idle ENDPOINT IDLE-TIMEOUT-SECONDS
 *
 * --drain sends the server SIGTERM while a subscription is open and checks what a client sees: the
 * stream and a new call end with UNAVAILABLE, marked retryable (the server then exits). --idle
 * waits out the server's --idle-timeout: the next call goes out on a new connection by itself.
 *
 * With KEEPALIVE-SECONDS, the server's --keepalive-interval plus --keepalive-timeout, it also checks
 * that a client that polls keeps its connection through a longer silence, and one that does not
 * loses it. Each check prints what failed; the exit status is 1 if any did. test.sh starts a homed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "home/v1/accessory_link.pb-c.h"
#include "home/v1/events.pb-c.h"
#include "home/v1/health.pb-c.h"
#include "home/v1/home_service.pb-c.h"
#include "homerpc.h"

static int failures;

#define CHECK(condition, ...)                                                                                  \
    do {                                                                                                       \
        if (!(condition)) {                                                                                    \
            failures++;                                                                                        \
            fprintf(stderr, "FAILED %s:%d: %s: ", __FILE__, __LINE__, #condition);                             \
            fprintf(stderr, __VA_ARGS__);                                                                      \
            fprintf(stderr, "\n");                                                                             \
        }                                                                                                      \
    } while (0)

static char token[512];
static char name_suffix[32];

static void read_token(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file || !fgets(token, sizeof token, file)) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(file);
    token[strcspn(token, "\r\n")] = '\0';
}

static homerpc_client *connect_or_exit(const char *endpoint, const char *bearer) {
    homerpc_status status = {0};
    homerpc_client *client = homerpc_connect(endpoint, bearer, &status);
    if (!client) {
        fprintf(stderr, "cannot connect to %s: %s\n", endpoint, status.message);
        exit(2);
    }
    return client;
}

static int health_check(homerpc_client *client, homerpc_status *status) {
    Home__V1__HealthCheckRequest request = HOME__V1__HEALTH_CHECK_REQUEST__INIT;
    Home__V1__HealthCheckResponse *response = NULL;
    int code = homerpc_call(client, "home.v1.Health/Check", &request.base, &home__v1__health_check_response__descriptor,
                            (ProtobufCMessage **)&response, 2000, NULL, status);
    int serving = code == HOMERPC_OK &&
                  response->status == HOME__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING_STATUS_SERVING;
    if (response) protobuf_c_message_free_unpacked(&response->base, NULL);
    return serving;
}

static int add_room(homerpc_client *client, ProtobufCBinaryData home, const char *name, homerpc_status *status) {
    Home__V1__AddRoomRequest request = HOME__V1__ADD_ROOM_REQUEST__INIT;
    request.home_id = home;
    request.name = (char *)name;
    Home__V1__AddRoomResponse *response = NULL;
    int code = homerpc_call(client, "home.v1.HomeService/AddRoom", &request.base,
                            &home__v1__add_room_response__descriptor, (ProtobufCMessage **)&response, 5000, NULL, status);
    if (response) protobuf_c_message_free_unpacked(&response->base, NULL);
    return code;
}

static int add_zone(homerpc_client *client, ProtobufCBinaryData home, const char *name, const char *key,
                    uint8_t zone_id[16], homerpc_status *status) {
    Home__V1__AddZoneRequest request = HOME__V1__ADD_ZONE_REQUEST__INIT;
    request.home_id = home;
    request.name = (char *)name;
    Home__V1__AddZoneResponse *response = NULL;
    int code = homerpc_call(client, "home.v1.HomeService/AddZone", &request.base,
                            &home__v1__add_zone_response__descriptor, (ProtobufCMessage **)&response, 5000, key, status);
    if (response) {
        if (response->zone && response->zone->id.len == 16) memcpy(zone_id, response->zone->id.data, 16);
        protobuf_c_message_free_unpacked(&response->base, NULL);
    }
    return code;
}

static uint64_t home_revision(homerpc_client *client, ProtobufCBinaryData home) {
    Home__V1__GetHomeRequest request = HOME__V1__GET_HOME_REQUEST__INIT;
    request.home_id = home;
    Home__V1__GetHomeResponse *response = NULL;
    homerpc_status status = {0};
    uint64_t revision = 0;
    if (homerpc_call(client, "home.v1.HomeService/GetHome", &request.base, &home__v1__get_home_response__descriptor,
                     (ProtobufCMessage **)&response, 5000, NULL, &status) == HOMERPC_OK) {
        revision = response->home->revision;
        protobuf_c_message_free_unpacked(&response->base, NULL);
    }
    CHECK(status.code == HOMERPC_OK, "GetHome: %s %s", homerpc_code_name(status.code), status.message);
    homerpc_status_reset(&status);
    return revision;
}

/* The next event of the stream, or NULL (a failed check) if none arrives within 5 s. */
static Home__V1__Event *next_event(homerpc_stream *stream) {
    ProtobufCMessage *message = NULL;
    homerpc_status status = {0};
    enum homerpc_next next = homerpc_stream_next(stream, &message, 5000, &status);
    CHECK(next == HOMERPC_NEXT_MESSAGE, "stream_next gave %d (%s: %s)", next, homerpc_code_name(status.code),
          status.message);
    homerpc_status_reset(&status);
    return (Home__V1__Event *)message;
}

static void test_connection_failures(void) {
    homerpc_status status = {0};
    CHECK(homerpc_connect("no-port-here", NULL, &status) == NULL, "connected to a malformed endpoint");
    CHECK(status.code == HOMERPC_INVALID_ARGUMENT, "malformed endpoint: %s", homerpc_code_name(status.code));
    CHECK(homerpc_connect("127.0.0.1:1", NULL, &status) == NULL, "connected to a closed port");
    CHECK(status.code == HOMERPC_UNAVAILABLE, "closed port: %s", homerpc_code_name(status.code));
    CHECK(homerpc_connect("unix:/nonexistent/homed.sock", NULL, &status) == NULL, "connected to a missing socket");
    CHECK(status.code == HOMERPC_UNAVAILABLE, "missing socket: %s", homerpc_code_name(status.code));
    homerpc_status_reset(&status);
}

/* A fake server in a child process: it accepts one connection, sends its preface and an empty
 * SETTINGS, then does what `behave` says. Fills `endpoint`; returns the child's pid, or -1. */
static pid_t start_fake_server(void (*behave)(int peer), char *endpoint, size_t size) {
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    int small = 4096;
    setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &small, sizeof small); /* inherited: little fits */
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    if (listener < 0 || bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 1) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
        CHECK(0, "cannot listen: %s", strerror(errno));
        return -1;
    }
    pid_t server = fork();
    if (server == 0) {
        alarm(70); /* gone by itself should the test die first */
        int peer = accept(listener, NULL, NULL);
        static const unsigned char hello[] = {'H', 'R', 'P', 'C', '\r', '\n', 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0};
        if (write(peer, hello, sizeof hello) != (ssize_t)sizeof hello) _exit(1);
        behave(peer);
        _exit(0);
    }
    close(listener);
    snprintf(endpoint, size, "127.0.0.1:%d", ntohs(address.sin_port));
    return server;
}

/* Sends 8 MB of PINGs (more PONGs than the sockets hold, less than the client reads ahead), then
 * reads nothing more. */
static void flood_pings_and_stop_reading(int peer) {
    static unsigned char pings[18 * 4096];
    for (size_t i = 0; i < sizeof pings; i += 18) memcpy(pings + i, (unsigned char[10]){0, 0, 0, 8, 7}, 10);
    for (int i = 0; i < 112; i++)
        if (write(peer, pings, sizeof pings) != (ssize_t)sizeof pings) _exit(1);
    pause();
}

/* Reads everything and answers nothing, PINGs included: a server gone quiet. */
static void read_and_answer_nothing(int peer) {
    unsigned char buffer[4096];
    while (read(peer, buffer, sizeof buffer) > 0) {
    }
    pause();
}

/* A Health/Check without deadline against a fake server: the failure it ends with. */
static void check_fake_server_fails_call(void (*behave)(int peer), int keepalive_ms, const char *expected) {
    char endpoint[32];
    pid_t server = start_fake_server(behave, endpoint, sizeof endpoint);
    if (server < 0) return;
    alarm(60); /* a hang fails the test instead of holding CI */
    homerpc_client *client = connect_or_exit(endpoint, NULL);
    if (keepalive_ms) homerpc_set_keepalive(client, keepalive_ms, keepalive_ms);
    homerpc_status status = {0};
    Home__V1__HealthCheckRequest request = HOME__V1__HEALTH_CHECK_REQUEST__INIT;
    ProtobufCMessage *response = NULL;
    int code = homerpc_call(client, "home.v1.Health/Check", &request.base, &home__v1__health_check_response__descriptor,
                            &response, 0, NULL, &status);
    CHECK(code == HOMERPC_UNAVAILABLE && strstr(status.message, expected), "fake server: %s %s (expected \"%s\")",
          homerpc_code_name(code), status.message, expected);
    alarm(0);
    homerpc_status_reset(&status);
    homerpc_close(client);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
}

/* A server that stops reading: its PINGs' PONGs fill the socket, and the client's send gives up
 * (SEND_STALL_MS, 10 s) instead of waiting for ever. A server gone quiet: the client's keepalive
 * PING goes unanswered, and the call without deadline ends (here after 300 ms + 300 ms). */
static void test_dead_servers(void) {
    check_fake_server_fails_call(flood_pings_and_stop_reading, 0, "read nothing for 10000 ms");
    check_fake_server_fails_call(read_and_answer_nothing, 300, "keepalive timeout");
}

static void test_authentication(const char *endpoint) {
    homerpc_client *anonymous = connect_or_exit(endpoint, NULL);
    homerpc_status status = {0};
    CHECK(health_check(anonymous, &status), "Health/Check without a token: %s", status.message);
    Home__V1__ListHomesRequest list = HOME__V1__LIST_HOMES_REQUEST__INIT;
    ProtobufCMessage *response = NULL;
    int code = homerpc_call(anonymous, "home.v1.HomeService/ListHomes", &list.base,
                            &home__v1__list_homes_response__descriptor, &response, 2000, NULL, &status);
    CHECK(code == HOMERPC_UNAUTHENTICATED && response == NULL, "ListHomes without a token: %s",
          homerpc_code_name(code));
    homerpc_close(anonymous);

    homerpc_client *impostor = connect_or_exit(endpoint, "hrt_not-a-real-token");
    code = homerpc_call(impostor, "home.v1.HomeService/ListHomes", &list.base,
                        &home__v1__list_homes_response__descriptor, &response, 2000, NULL, &status);
    CHECK(code == HOMERPC_UNAUTHENTICATED, "ListHomes with a wrong token: %s", homerpc_code_name(code));
    homerpc_close(impostor);
    homerpc_status_reset(&status);
}

/* ---- stream ids never repeat on a connection: past the last one the client connects again ---- */

void homerpc_testing_set_next_stream_id(homerpc_client *client, uint32_t id); /* -DHOMERPC_TESTING */

static void test_last_stream_id(const char *endpoint) {
    homerpc_client *client = connect_or_exit(endpoint, NULL);
    homerpc_testing_set_next_stream_id(client, UINT32_MAX - 1);
    homerpc_status status = {0};
    for (int call = 0; call < 4; call++) /* ids 2^32 - 2 and 2^32 - 1, then 1 and 2 on a new connection */
        CHECK(health_check(client, &status), "Health/Check %d near the last stream id: %s", call, status.message);
    homerpc_close(client);
    homerpc_status_reset(&status);
}

/* ---- the accessory face: a lamp in C pairs, takes one write and refuses the next ---- */

static const char *lamp_endpoint;
static pthread_mutex_t lamp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lamp_changed = PTHREAD_COND_INITIALIZER;
static uint8_t lamp_accessory_id[16], lamp_on_id[16];
static int lamp_advertised, lamp_paired, lamp_writes;
static int lamp_last_value = -1;

static void lamp_publish(int *flag) {
    pthread_mutex_lock(&lamp_lock);
    (*flag)++;
    pthread_cond_broadcast(&lamp_changed);
    pthread_mutex_unlock(&lamp_lock);
}

/* Answers a command on the link's own connection, as AnswerCommand requires. */
static void lamp_answer(homerpc_client *link, uint64_t command_id, int32_t hap_status) {
    Home__V1__AnswerCommandRequest answer = HOME__V1__ANSWER_COMMAND_REQUEST__INIT;
    answer.command_id = command_id;
    answer.hap_status = hap_status;
    ProtobufCMessage *response = NULL;
    homerpc_status status = {0};
    int code = homerpc_call(link, "home.v1.AccessoryLink/AnswerCommand", &answer.base,
                            &home__v1__answer_command_response__descriptor, &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_OK, "AnswerCommand: %s %s", homerpc_code_name(code), status.message);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    homerpc_status_reset(&status);
}

static void *lamp(void *unused) {
    (void)unused;
    homerpc_client *link = connect_or_exit(lamp_endpoint, NULL); /* accessories carry no bearer token */
    Home__V1__CharacteristicDescription on = HOME__V1__CHARACTERISTIC_DESCRIPTION__INIT;
    on.type = "00000025-0000-1000-8000-0026BB765291";
    Home__V1__CharacteristicDescription *characteristics[] = {&on};
    Home__V1__ServiceDescription bulb = HOME__V1__SERVICE_DESCRIPTION__INIT;
    bulb.type = "00000043-0000-1000-8000-0026BB765291";
    bulb.n_characteristics = 1;
    bulb.characteristics = characteristics;
    Home__V1__ServiceDescription *services[] = {&bulb};
    Home__V1__AccessoryDescription description = HOME__V1__ACCESSORY_DESCRIPTION__INIT;
    description.name = "C Lamp";
    description.n_services = 1;
    description.services = services;
    Home__V1__AdvertiseRequest advertise = HOME__V1__ADVERTISE_REQUEST__INIT;
    advertise.accessory = &description;
    advertise.setup_code = "284-91-735";
    homerpc_status status = {0};
    homerpc_stream *stream = homerpc_stream_open(link, "home.v1.AccessoryLink/Advertise", &advertise.base,
                                                 &home__v1__link_message__descriptor, 0, &status);
    CHECK(stream != NULL, "Advertise: %s", status.message);
    while (stream && lamp_writes < 2) {
        ProtobufCMessage *message = NULL;
        enum homerpc_next next = homerpc_stream_next(stream, &message, 10000, &status);
        if (next != HOMERPC_NEXT_MESSAGE) {
            CHECK(0, "the link gave %d (%s: %s)", next, homerpc_code_name(status.code), status.message);
            break;
        }
        Home__V1__LinkMessage *link_message = (Home__V1__LinkMessage *)message;
        switch (link_message->kind_case) {
        case HOME__V1__LINK_MESSAGE__KIND_ADVERTISED: {
            Home__V1__AccessoryDescription *advertised = link_message->advertised->accessory;
            memcpy(lamp_accessory_id, advertised->id.data, 16);
            memcpy(lamp_on_id, advertised->services[0]->characteristics[0]->id.data, 16);
            lamp_publish(&lamp_advertised);
            break;
        }
        case HOME__V1__LINK_MESSAGE__KIND_PAIRED:
            CHECK(strncmp(link_message->paired->credential, "hac_", 4) == 0, "credential %s",
                  link_message->paired->credential);
            lamp_publish(&lamp_paired);
            break;
        case HOME__V1__LINK_MESSAGE__KIND_COMMAND: {
            Home__V1__Command *command = link_message->command;
            CHECK(command->action_case == HOME__V1__COMMAND__ACTION_WRITE, "command %d", command->action_case);
            if (command->action_case == HOME__V1__COMMAND__ACTION_WRITE)
                lamp_last_value = command->write->value->bool_value;
            lamp_answer(link, command->command_id, lamp_writes == 0 ? 0 : -70403 /* busy */);
            lamp_publish(&lamp_writes);
            break;
        }
        default:
            CHECK(0, "unexpected link message %d", link_message->kind_case);
        }
        protobuf_c_message_free_unpacked(message, NULL);
    }
    homerpc_stream_close(stream);
    homerpc_status_reset(&status);
    homerpc_close(link);
    return NULL;
}

static int write_on(homerpc_client *client, ProtobufCBinaryData home, int on, homerpc_status *status) {
    Home__V1__CharacteristicValue value = HOME__V1__CHARACTERISTIC_VALUE__INIT;
    value.kind_case = HOME__V1__CHARACTERISTIC_VALUE__KIND_BOOL_VALUE;
    value.bool_value = on;
    Home__V1__WriteCharacteristicRequest request = HOME__V1__WRITE_CHARACTERISTIC_REQUEST__INIT;
    request.home_id = home;
    request.characteristic_id = (ProtobufCBinaryData){16, lamp_on_id};
    request.value = &value;
    ProtobufCMessage *response = NULL;
    int code = homerpc_call(client, "home.v1.HomeService/WriteCharacteristic", &request.base,
                            &home__v1__write_characteristic_response__descriptor, &response, 5000, NULL, status);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    return code;
}

static void test_accessory(const char *endpoint, homerpc_client *controller, ProtobufCBinaryData home) {
    lamp_endpoint = endpoint;
    pthread_t thread;
    pthread_create(&thread, NULL, lamp, NULL);
    pthread_mutex_lock(&lamp_lock);
    while (!lamp_advertised) pthread_cond_wait(&lamp_changed, &lamp_lock);
    pthread_mutex_unlock(&lamp_lock);

    homerpc_status status = {0};
    Home__V1__AddAccessoryRequest add = HOME__V1__ADD_ACCESSORY_REQUEST__INIT;
    add.home_id = home;
    add.accessory_id = (ProtobufCBinaryData){16, lamp_accessory_id};
    add.setup_code = "111-22-333";
    ProtobufCMessage *response = NULL;
    int code = homerpc_call(controller, "home.v1.HomeService/AddAccessory", &add.base,
                            &home__v1__add_accessory_response__descriptor, &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_PERMISSION_DENIED && homerpc_homekit_code(&status) == 18, "a wrong setup code: %s %d",
          homerpc_code_name(code), homerpc_homekit_code(&status));
    add.setup_code = "284-91-735";
    code = homerpc_call(controller, "home.v1.HomeService/AddAccessory", &add.base,
                        &home__v1__add_accessory_response__descriptor, &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_OK, "AddAccessory: %s %s", homerpc_code_name(code), status.message);
    if (response) protobuf_c_message_free_unpacked(response, NULL);

    CHECK(write_on(controller, home, 1, &status) == HOMERPC_OK, "a write the lamp accepts: %s %s",
          homerpc_code_name(status.code), status.message);
    CHECK(write_on(controller, home, 0, &status) == HOMERPC_UNAVAILABLE && homerpc_homekit_code(&status) == 14,
          "a write the lamp refuses as busy: %s %d", homerpc_code_name(status.code), homerpc_homekit_code(&status));
    pthread_join(thread, NULL);
    CHECK(lamp_paired == 1 && lamp_writes == 2 && lamp_last_value == 0, "paired %d, writes %d, last value %d",
          lamp_paired, lamp_writes, lamp_last_value);

    Home__V1__ReadCharacteristicRequest read = HOME__V1__READ_CHARACTERISTIC_REQUEST__INIT;
    read.home_id = home;
    read.characteristic_id = (ProtobufCBinaryData){16, lamp_on_id};
    Home__V1__ReadCharacteristicResponse *cached = NULL;
    code = homerpc_call(controller, "home.v1.HomeService/ReadCharacteristic", &read.base,
                        &home__v1__read_characteristic_response__descriptor, (ProtobufCMessage **)&cached, 5000, NULL,
                        &status);
    CHECK(code == HOMERPC_OK && cached->value && cached->value->kind_case == HOME__V1__CHARACTERISTIC_VALUE__KIND_BOOL_VALUE &&
              cached->value->bool_value,
          "the cache holds the accepted value, not the refused one: %s", homerpc_code_name(code));
    if (cached) protobuf_c_message_free_unpacked(&cached->base, NULL);
    homerpc_status_reset(&status);
}

/* A silence longer than the server's keepalive: the client that polls answers its PINGs and keeps
 * its connection, and with it its subscription; the silent one loses both, and its next call goes
 * out on a new connection by itself. */
static void test_keepalive(const char *endpoint, int keepalive_seconds) {
    homerpc_client *polling = connect_or_exit(endpoint, token);
    homerpc_client *silent = connect_or_exit(endpoint, token);
    homerpc_status status = {0};
    Home__V1__SubscribeRequest everything = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    homerpc_stream *kept = homerpc_stream_open(polling, "home.v1.HomeService/Subscribe", &everything.base,
                                               &home__v1__event__descriptor, 0, &status);
    homerpc_stream *lost = homerpc_stream_open(silent, "home.v1.HomeService/Subscribe", &everything.base,
                                               &home__v1__event__descriptor, 0, &status);
    CHECK(kept && lost, "Subscribe: %s", status.message);
    int silence_ms = (keepalive_seconds + 2) * 1000;
    CHECK(homerpc_poll(polling, silence_ms) == 0, "homerpc_poll through the silence");
    ProtobufCMessage *message = NULL;
    CHECK(homerpc_stream_next(kept, &message, 0, &status) == HOMERPC_NEXT_TIMEOUT,
          "the polling client's subscription ended: %s %s", homerpc_code_name(status.code), status.message);
    CHECK(homerpc_stream_next(lost, &message, 1000, &status) == HOMERPC_NEXT_END && status.code == HOMERPC_UNAVAILABLE,
          "the silent client's subscription outlived its connection: %s", homerpc_code_name(status.code));
    CHECK(health_check(polling, &status), "the polling client after the silence: %s", status.message);
    CHECK(health_check(silent, &status), "the silent client's next call, on a new connection: %s %s",
          homerpc_code_name(status.code), status.message);
    homerpc_stream_close(kept);
    homerpc_stream_close(lost);
    homerpc_status_reset(&status);
    homerpc_close(polling);
    homerpc_close(silent);
}

static int test_drain(const char *endpoint, pid_t homed) {
    homerpc_client *client = connect_or_exit(endpoint, token);
    homerpc_status status = {0};
    Home__V1__SubscribeRequest everything = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    homerpc_stream *stream = homerpc_stream_open(client, "home.v1.HomeService/Subscribe", &everything.base,
                                                 &home__v1__event__descriptor, 0, &status);
    CHECK(stream != NULL, "Subscribe: %s", status.message);
    CHECK(health_check(client, &status), "Health/Check before the drain: %s", status.message);
    kill(homed, SIGTERM);
    ProtobufCMessage *message = NULL;
    enum homerpc_next next = homerpc_stream_next(stream, &message, 10000, &status);
    CHECK(next == HOMERPC_NEXT_END && status.code == HOMERPC_UNAVAILABLE && status.retryable,
          "the subscription at the drain: %d %s retryable %d", next, homerpc_code_name(status.code), status.retryable);
    CHECK(!health_check(client, &status) && status.code == HOMERPC_UNAVAILABLE && status.retryable,
          "a call after the drain began: %s retryable %d", homerpc_code_name(status.code), status.retryable);
    homerpc_stream_close(stream);
    homerpc_status_reset(&status);
    homerpc_close(client);
    if (failures) return 1;
    printf("C SDK: the drain as a client sees it passed\n");
    return 0;
}

static int test_idle(const char *endpoint, int idle_seconds) {
    homerpc_client *client = connect_or_exit(endpoint, NULL);
    homerpc_status status = {0};
    CHECK(health_check(client, &status), "Health/Check: %s", status.message);
    CHECK(homerpc_poll(client, (idle_seconds + 2) * 1000) == -1, "the connection outlived the idle timeout");
    CHECK(health_check(client, &status), "the next call, on a new connection: %s %s", homerpc_code_name(status.code),
          status.message);
    /* Without polling: the call goes out on the closed connection, is refused by the GOAWAY that
     * waits there (it had no effect), and goes once more on a new one. */
    sleep((unsigned)idle_seconds + 2);
    CHECK(health_check(client, &status), "a call sent into the idle-closed connection: %s %s",
          homerpc_code_name(status.code), status.message);
    homerpc_status_reset(&status);
    homerpc_close(client);
    if (failures) return 1;
    printf("C SDK: the idle timeout as a client sees it passed\n");
    return 0;
}

/* TLS against a homed requiring mutual TLS (--tls-client-ca): a client with the CA's certificate
 * is served, through reconnects too; one without a certificate, or trusting another CA, is refused
 * with the reason. CERTS is scripts/make-test-certificates.sh's folder. */
static int test_tls(const char *endpoint, const char *certs) {
    char ca[512], other_ca[512], cert[512], key[512];
    snprintf(ca, sizeof ca, "%s/ca.pem", certs);
    snprintf(other_ca, sizeof other_ca, "%s/other-ca.pem", certs);
    snprintf(cert, sizeof cert, "%s/client.pem", certs);
    snprintf(key, sizeof key, "%s/client.key", certs);
    homerpc_status status = {0};

    homerpc_tls_options mutual = {.ca_file = ca, .cert_file = cert, .key_file = key};
    homerpc_client *client = homerpc_connect_tls(endpoint, token, &mutual, &status);
    CHECK(client != NULL, "mutual TLS connect: %s", status.message);
    if (client) {
        for (int call = 0; call < 20; call++)
            CHECK(health_check(client, &status), "Health/Check %d over TLS: %s", call, status.message);
        Home__V1__ListHomesRequest request = HOME__V1__LIST_HOMES_REQUEST__INIT;
        Home__V1__ListHomesResponse *homes = NULL;
        int code = homerpc_call(client, "home.v1.HomeService/ListHomes", &request.base,
                                &home__v1__list_homes_response__descriptor, (ProtobufCMessage **)&homes, 5000, NULL,
                                &status);
        CHECK(code == HOMERPC_OK, "ListHomes over TLS: %s", status.message);
        if (homes) protobuf_c_message_free_unpacked(&homes->base, NULL);
        homerpc_close(client);
    }

    homerpc_tls_options no_certificate = {.ca_file = ca};
    client = homerpc_connect_tls(endpoint, token, &no_certificate, &status);
    /* TLS 1.3: the client finishes its side first; the server's refusal arrives with the first read. */
    int refused = client == NULL || !health_check(client, &status);
    CHECK(refused && strstr(status.message, "certificate required") != NULL,
          "no client certificate: refused with the reason (%s)", status.message);
    homerpc_close(client);

    homerpc_tls_options wrong_ca = {.ca_file = other_ca, .cert_file = cert, .key_file = key};
    client = homerpc_connect_tls(endpoint, token, &wrong_ca, &status);
    CHECK(client == NULL && status.code == HOMERPC_UNAVAILABLE && !status.retryable &&
              strstr(status.message, "certificate verify failed") != NULL,
          "a server certificate of another CA: refused (%s)", status.message);
    homerpc_close(client);

    homerpc_tls_options missing = {.ca_file = "/nonexistent/ca.pem"};
    client = homerpc_connect_tls(endpoint, token, &missing, &status);
    CHECK(client == NULL && status.code == HOMERPC_INVALID_ARGUMENT, "a missing CA file: %s", status.message);
    homerpc_status_reset(&status);
    if (failures == 0) printf("C SDK TLS test passed\n");
    return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--idle") == 0) return test_idle(argv[2], atoi(argv[3]));
    if (argc == 5 && strcmp(argv[1], "--tls") == 0) {
        read_token(argv[3]);
        return test_tls(argv[2], argv[4]);
    }
    if (argc == 5 && strcmp(argv[1], "--drain") == 0) {
        read_token(argv[3]);
        return test_drain(argv[2], (pid_t)atoi(argv[4]));
    }
    if (argc < 3) {
        fprintf(stderr, "usage: sdk-test ENDPOINT TOKEN-FILE [UNIX-SOCKET-PATH [KEEPALIVE-SECONDS]]\n"
                        "       sdk-test --drain ENDPOINT TOKEN-FILE HOMED-PID\n"
                        "       sdk-test --idle ENDPOINT IDLE-TIMEOUT-SECONDS\n"
                        "       sdk-test --tls ENDPOINT TOKEN-FILE CERTIFICATES-DIR\n");
        return 64;
    }
    const char *endpoint = argv[1];
    read_token(argv[2]);
    snprintf(name_suffix, sizeof name_suffix, "%d", (int)getpid());
    test_connection_failures();
    test_dead_servers();
    test_authentication(endpoint);
    test_last_stream_id(endpoint);

    homerpc_client *owner = connect_or_exit(endpoint, token);
    homerpc_client *other = connect_or_exit(endpoint, token);
    homerpc_status status = {0};

    /* A home, and the failures that carry HomeKit details. */
    char home_name[64];
    snprintf(home_name, sizeof home_name, "C SDK %s", name_suffix);
    Home__V1__AddHomeRequest add_home = HOME__V1__ADD_HOME_REQUEST__INIT;
    add_home.name = home_name;
    Home__V1__AddHomeResponse *added = NULL;
    int code = homerpc_call(owner, "home.v1.HomeService/AddHome", &add_home.base,
                            &home__v1__add_home_response__descriptor, (ProtobufCMessage **)&added, 5000, NULL, &status);
    if (code != HOMERPC_OK) {
        fprintf(stderr, "AddHome failed: %s %s\n", homerpc_code_name(code), status.message);
        return 1;
    }
    CHECK(strcmp(added->home->name, home_name) == 0, "home name %s", added->home->name);
    CHECK(added->home->id.len == 16, "home id of %zu bytes", added->home->id.len);
    ProtobufCBinaryData home = added->home->id;

    CHECK(add_room(owner, home, "Kitchen", &status) == HOMERPC_OK, "AddRoom: %s", status.message);
    CHECK(add_room(owner, home, "kitchen", &status) == HOMERPC_ALREADY_EXISTS, "AddRoom twice: %s",
          homerpc_code_name(status.code));
    CHECK(homerpc_homekit_code(&status) == 31, "AddRoom twice: HomeKit %d", homerpc_homekit_code(&status));
    CHECK(status.details && strcmp(status.details->field, "name") == 0, "AddRoom twice: field %s",
          status.details ? status.details->field : "(no details)");
    CHECK(add_room(owner, home, "Bad!", &status) == HOMERPC_INVALID_ARGUMENT, "AddRoom Bad!: %s",
          homerpc_code_name(status.code));
    CHECK(homerpc_homekit_code(&status) == 35, "AddRoom Bad!: HomeKit %d", homerpc_homekit_code(&status));

    Home__V1__GetHomeRequest malformed = HOME__V1__GET_HOME_REQUEST__INIT;
    malformed.home_id.data = (uint8_t *)"abc";
    malformed.home_id.len = 3;
    ProtobufCMessage *response = NULL;
    code = homerpc_call(owner, "home.v1.HomeService/GetHome", &malformed.base, &home__v1__get_home_response__descriptor,
                        &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_INVALID_ARGUMENT && homerpc_homekit_code(&status) == 3, "GetHome with 3 bytes: %s %d",
          homerpc_code_name(code), homerpc_homekit_code(&status));
    CHECK(status.details && strcmp(status.details->field, "home_id") == 0, "GetHome with 3 bytes: field %s",
          status.details ? status.details->field : "(no details)");
    code = homerpc_call(owner, "home.v1.HomeService/NoSuchMethod", NULL, &home__v1__get_home_response__descriptor,
                        &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_UNIMPLEMENTED, "unknown method: %s", homerpc_code_name(code));
    /* A streaming method called as unary fails that call, not the connection: with two homes, a
     * subscription with snapshots sends two messages at once. */
    char second_name[64];
    snprintf(second_name, sizeof second_name, "C SDK second %s", name_suffix);
    Home__V1__AddHomeRequest add_second = HOME__V1__ADD_HOME_REQUEST__INIT;
    add_second.name = second_name;
    code = homerpc_call(owner, "home.v1.HomeService/AddHome", &add_second.base, &home__v1__add_home_response__descriptor,
                        &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_OK, "AddHome %s: %s", second_name, status.message);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    Home__V1__SubscribeRequest all_homes = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    all_homes.snapshot = 1;
    code = homerpc_call(owner, "home.v1.HomeService/Subscribe", &all_homes.base, &home__v1__event__descriptor,
                        &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_INTERNAL && response == NULL, "Subscribe as a unary call: %s", homerpc_code_name(code));
    CHECK(health_check(owner, &status), "the client after a streaming method called as unary: %s", status.message);

    /* A trace id goes with the calls after it (test.sh's homed logs every call: the log shows it). */
    CHECK(homerpc_set_trace_id(owner, "c-sdk-trace-7") == 0, "homerpc_set_trace_id");
    CHECK(health_check(owner, &status), "Health/Check with a trace id: %s", status.message);
    CHECK(homerpc_set_trace_id(owner, NULL) == 0, "homerpc_set_trace_id(NULL)");

    /* Idempotency: the retry returns the first outcome; another request under the key is refused. */
    char key[64];
    snprintf(key, sizeof key, "c-sdk-test-%s", name_suffix);
    uint8_t first[16] = {0}, retried[16] = {1};
    CHECK(add_zone(owner, home, "Upstairs", key, first, &status) == HOMERPC_OK, "AddZone: %s", status.message);
    CHECK(add_zone(owner, home, "Upstairs", key, retried, &status) == HOMERPC_OK, "AddZone retried: %s",
          status.message);
    CHECK(memcmp(first, retried, 16) == 0, "the retry made another zone");
    CHECK(add_zone(owner, home, "Downstairs", key, retried, &status) == HOMERPC_INVALID_ARGUMENT,
          "another request under a used key: %s", homerpc_code_name(status.code));

    /* A change subscription: events made on another connection, a unary call while the stream is open,
     * more events than the credit window, and the end when the home goes. */
    test_accessory(endpoint, owner, home);

    uint64_t revision = home_revision(owner, home);
    Home__V1__SubscribeRequest subscribe = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    subscribe.n_home_ids = 1;
    subscribe.home_ids = &home;
    homerpc_stream *stream =
        homerpc_stream_open(owner, "home.v1.HomeService/Subscribe", &subscribe.base, &home__v1__event__descriptor, 0,
                            &status);
    CHECK(stream != NULL, "Subscribe: %s", status.message);
    ProtobufCMessage *message = NULL;
    CHECK(homerpc_stream_next(stream, &message, 200, &status) == HOMERPC_NEXT_TIMEOUT, "an event before any change");
    CHECK(add_room(other, home, "Hall", &status) == HOMERPC_OK, "AddRoom Hall: %s", status.message);
    uint64_t after = home_revision(owner, home); /* a unary call while the event waits on the stream */
    CHECK(after > revision, "revision %llu after %llu", (unsigned long long)after, (unsigned long long)revision);
    Home__V1__Event *event = next_event(stream);
    if (event) {
        CHECK(event->payload_case == HOME__V1__EVENT__PAYLOAD_ROOM_ADDED, "event %d", event->payload_case);
        CHECK(event->payload_case != HOME__V1__EVENT__PAYLOAD_ROOM_ADDED ||
                  strcmp(event->room_added->room->name, "Hall") == 0,
              "a RoomAdded for another room");
        CHECK(event->revision == after, "event revision %llu, home at %llu", (unsigned long long)event->revision,
              (unsigned long long)after);
        protobuf_c_message_free_unpacked(&event->base, NULL);
    }
    enum { ROOMS = HOMERPC_STREAM_WINDOW * 2 + 5 };
    for (int i = 0; i < ROOMS; i++) {
        char room[32];
        snprintf(room, sizeof room, "Room %d", i);
        CHECK(add_room(other, home, room, &status) == HOMERPC_OK, "AddRoom %s: %s", room, status.message);
    }
    for (int i = 0; i < ROOMS; i++) {
        event = next_event(stream);
        if (!event) break;
        char room[32];
        snprintf(room, sizeof room, "Room %d", i);
        CHECK(event->payload_case == HOME__V1__EVENT__PAYLOAD_ROOM_ADDED &&
                  strcmp(event->room_added->room->name, room) == 0,
              "event %d is not the RoomAdded of %s", i, room);
        protobuf_c_message_free_unpacked(&event->base, NULL);
    }

    Home__V1__RemoveHomeRequest remove = HOME__V1__REMOVE_HOME_REQUEST__INIT;
    remove.home_id = home;
    code = homerpc_call(other, "home.v1.HomeService/RemoveHome", &remove.base,
                        &home__v1__remove_home_response__descriptor, &response, 5000, NULL, &status);
    CHECK(code == HOMERPC_OK, "RemoveHome: %s", status.message);
    if (response) protobuf_c_message_free_unpacked(response, NULL);
    event = next_event(stream);
    CHECK(event && event->payload_case == HOME__V1__EVENT__PAYLOAD_HOME_REMOVED, "no HomeRemoved");
    if (event) protobuf_c_message_free_unpacked(&event->base, NULL);
    CHECK(homerpc_stream_next(stream, &message, 5000, &status) == HOMERPC_NEXT_END && status.code == HOMERPC_OK,
          "the stream did not end with OK once its home was gone: %s", homerpc_code_name(status.code));
    CHECK(homerpc_stream_next(stream, &message, 0, &status) == HOMERPC_NEXT_END, "a second next after the end");
    homerpc_stream_close(stream);

    /* A refused stream ends with the server's status; a cancelled one leaves the client usable. */
    stream = homerpc_stream_open(owner, "home.v1.HomeService/Subscribe", &subscribe.base, &home__v1__event__descriptor,
                                 0, &status);
    CHECK(stream != NULL, "Subscribe to a removed home: %s", status.message);
    if (stream) {
        CHECK(homerpc_stream_next(stream, &message, 5000, &status) == HOMERPC_NEXT_END &&
                  status.code == HOMERPC_NOT_FOUND && homerpc_homekit_code(&status) == 2,
              "Subscribe to a removed home: %s %d", homerpc_code_name(status.code), homerpc_homekit_code(&status));
        homerpc_stream_close(stream);
    }
    Home__V1__SubscribeRequest everything = HOME__V1__SUBSCRIBE_REQUEST__INIT;
    stream = homerpc_stream_open(owner, "home.v1.HomeService/Subscribe", &everything.base, &home__v1__event__descriptor,
                                 0, &status);
    CHECK(stream != NULL, "Subscribe to every home: %s", status.message);
    homerpc_stream_close(stream);
    CHECK(health_check(owner, &status), "the client after a cancelled stream: %s", status.message);
    protobuf_c_message_free_unpacked(&added->base, NULL);

    if (argc > 3) {
        char unix_endpoint[300];
        snprintf(unix_endpoint, sizeof unix_endpoint, "unix:%s", argv[3]);
        homerpc_client *local = connect_or_exit(unix_endpoint, token);
        CHECK(health_check(local, &status), "Health/Check over %s: %s", unix_endpoint, status.message);
        homerpc_close(local);
    }
    homerpc_status_reset(&status);
    homerpc_close(owner);
    homerpc_close(other);
    if (argc > 4) test_keepalive(endpoint, atoi(argv[4]));
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("C SDK: every check passed\n");
    return 0;
}
