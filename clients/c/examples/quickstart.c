/*
 * quickstart: the C SDK in a few calls. Adds a home and a room to it, then lists the caller's homes.
 *
 *   quickstart HOME-NAME ROOM-NAME [ENDPOINT [TOKEN-FILE]]
 *
 * ENDPOINT defaults to 127.0.0.1:7420 and TOKEN-FILE to homed-owner.token (the server's owner token,
 * written beside its store on first start). Exits 1 when a call fails, printing the server's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "home/v1/home_service.pb-c.h"
#include "homerpc.h"

static char *read_token(const char *path) {
    static char token[512];
    FILE *file = fopen(path, "r");
    if (!file || !fgets(token, sizeof token, file)) {
        fprintf(stderr, "cannot read a token from %s\n", path);
        exit(64);
    }
    fclose(file);
    token[strcspn(token, "\r\n")] = '\0';
    return token;
}

static void print_failure(const char *what, const homerpc_status *status) {
    fprintf(stderr, "%s: %s: %s", what, homerpc_code_name(status->code), status->message);
    if (status->details && status->details->homekit_code)
        fprintf(stderr, " [HomeKit %d %s]", status->details->homekit_code, status->details->homekit_name);
    fprintf(stderr, "\n");
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: quickstart HOME-NAME ROOM-NAME [ENDPOINT [TOKEN-FILE]]\n");
        return 64;
    }
    const char *endpoint = argc > 3 ? argv[3] : "127.0.0.1:7420";
    const char *token = read_token(argc > 4 ? argv[4] : "homed-owner.token");
    homerpc_status status = {0};
    homerpc_client *client = homerpc_connect(endpoint, token, &status);
    if (!client) {
        print_failure("connect", &status);
        return 1;
    }
    int exit_code = 1;
    Home__V1__AddHomeResponse *home = NULL;
    Home__V1__AddRoomResponse *room = NULL;
    Home__V1__ListHomesResponse *homes = NULL;

    Home__V1__AddHomeRequest add_home = HOME__V1__ADD_HOME_REQUEST__INIT;
    add_home.name = argv[1];
    if (homerpc_call(client, HOMERPC_HOME_SERVICE_ADD_HOME, &add_home.base, &home__v1__add_home_response__descriptor,
                     (ProtobufCMessage **)&home, 5000, NULL, &status) != HOMERPC_OK) {
        print_failure("AddHome", &status);
        goto done;
    }
    printf("added home \"%s\"\n", home->home->name);

    Home__V1__AddRoomRequest add_room = HOME__V1__ADD_ROOM_REQUEST__INIT;
    add_room.home_id = home->home->id;
    add_room.name = argv[2];
    if (homerpc_call(client, HOMERPC_HOME_SERVICE_ADD_ROOM, &add_room.base, &home__v1__add_room_response__descriptor,
                     (ProtobufCMessage **)&room, 5000, NULL, &status) != HOMERPC_OK) {
        print_failure("AddRoom", &status);
        goto done;
    }
    printf("added room \"%s\"\n", room->room->name);

    Home__V1__ListHomesRequest list = HOME__V1__LIST_HOMES_REQUEST__INIT;
    if (homerpc_call(client, HOMERPC_HOME_SERVICE_LIST_HOMES, &list.base, &home__v1__list_homes_response__descriptor,
                     (ProtobufCMessage **)&homes, 5000, NULL, &status) != HOMERPC_OK) {
        print_failure("ListHomes", &status);
        goto done;
    }
    for (size_t i = 0; i < homes->n_homes; i++)
        printf("home \"%s\"%s\n", homes->homes[i]->name, homes->homes[i]->primary ? " (primary)" : "");
    exit_code = 0;
done:
    if (home) protobuf_c_message_free_unpacked(&home->base, NULL);
    if (room) protobuf_c_message_free_unpacked(&room->base, NULL);
    if (homes) protobuf_c_message_free_unpacked(&homes->base, NULL);
    homerpc_status_reset(&status);
    homerpc_close(client);
    return exit_code;
}
