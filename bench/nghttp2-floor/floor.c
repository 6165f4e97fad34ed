/*
 * nghttp2-floor: what nghttp2 alone costs a server per gRPC unary call, with no network, no event
 * loop and no application: a client session writes batches of requests as cload sends them (the
 * same header fields, a Bearer token, a 2-byte message), and a server session reads them and
 * answers each with gRPC's response headers, a 7-byte DATA frame and the OK trailers, from
 * callbacks that do nothing else. Only the server session's time is counted (nghttp2_session_mem_recv
 * of the requests and nghttp2_session_mem_send of the answers). Prints nanoseconds per call.
 * This is the floor under any server built on nghttp2, homed's gRPC door included
 * (bench/grpc-door.sh compares the door with homed's own protocol).
 *
 *   floor CALLS BATCH
 */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct buffer { unsigned char *bytes; size_t used, capacity; };

static void append(struct buffer *b, const unsigned char *bytes, size_t count) {
    if (b->used + count > b->capacity) {
        b->capacity = (b->used + count) * 2;
        b->bytes = realloc(b->bytes, b->capacity);
    }
    memcpy(b->bytes + b->used, bytes, count);
    b->used += count;
}

static struct buffer to_server, to_client;
static long answered;

static ssize_t send_to_server(nghttp2_session *s, const uint8_t *d, size_t n, int f, void *u) {
    (void)s, (void)f, (void)u;
    append(&to_server, d, n);
    return (ssize_t)n;
}
static ssize_t send_to_client(nghttp2_session *s, const uint8_t *d, size_t n, int f, void *u) {
    (void)s, (void)f, (void)u;
    append(&to_client, d, n);
    return (ssize_t)n;
}

static const unsigned char message[7] = {0, 0, 0, 0, 2, 0x08, 0x01}; /* SERVING */
#define NV(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, NGHTTP2_NV_FLAG_NONE}
static nghttp2_nv response_headers[] = {NV(":status", "200"), NV("content-type", "application/grpc")};
static nghttp2_nv trailers[] = {NV("grpc-status", "0")};

static ssize_t body(nghttp2_session *s, int32_t stream, uint8_t *into, size_t room, uint32_t *flags,
                    nghttp2_data_source *source, void *u) {
    (void)room, (void)source, (void)u;
    memcpy(into, message, sizeof message);
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    nghttp2_submit_trailer(s, stream, trailers, 1);
    return sizeof message;
}

static int server_frame(nghttp2_session *s, const nghttp2_frame *frame, void *u) {
    (void)u;
    if ((frame->hd.type == NGHTTP2_DATA || frame->hd.type == NGHTTP2_HEADERS) &&
        (frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
        nghttp2_data_provider provider = {.read_callback = body};
        nghttp2_submit_response(s, frame->hd.stream_id, response_headers, 2, &provider);
    }
    return 0;
}
static int server_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *n, size_t nl, const uint8_t *v,
                         size_t vl, uint8_t fl, void *u) {
    (void)s, (void)f, (void)n, (void)nl, (void)v, (void)vl, (void)fl, (void)u;
    return 0;
}
static int server_data(nghttp2_session *s, uint8_t f, int32_t id, const uint8_t *d, size_t n, void *u) {
    (void)s, (void)f, (void)id, (void)d, (void)n, (void)u;
    return 0;
}
static int client_closed(nghttp2_session *s, int32_t id, uint32_t e, void *u) {
    (void)s, (void)id, (void)e, (void)u;
    answered++;
    return 0;
}

static ssize_t request_body(nghttp2_session *s, int32_t stream, uint8_t *into, size_t room, uint32_t *flags,
                            nghttp2_data_source *source, void *u) {
    (void)s, (void)stream, (void)room, (void)source, (void)u;
    static const unsigned char request[7] = {0, 0, 0, 0, 2, 0x0a, 0x00};
    memcpy(into, request, sizeof request);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return sizeof request;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    int batch = argc > 2 ? atoi(argv[2]) : 16;
    nghttp2_session_callbacks *cc, *sc;
    nghttp2_session_callbacks_new(&cc);
    nghttp2_session_callbacks_set_send_callback(cc, send_to_server);
    nghttp2_session_callbacks_set_on_stream_close_callback(cc, client_closed);
    nghttp2_session_callbacks_new(&sc);
    nghttp2_session_callbacks_set_send_callback(sc, send_to_client);
    nghttp2_session_callbacks_set_on_frame_recv_callback(sc, server_frame);
    nghttp2_session_callbacks_set_on_header_callback(sc, server_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(sc, server_data);
    nghttp2_session *client, *server;
    nghttp2_session_client_new(&client, cc, NULL);
    nghttp2_session_server_new(&server, sc, NULL);
    nghttp2_submit_settings(client, NGHTTP2_FLAG_NONE, NULL, 0);
    nghttp2_submit_settings(server, NGHTTP2_FLAG_NONE, NULL, 0);
    nghttp2_nv request[] = {
        NV(":method", "POST"), NV(":scheme", "http"), NV(":path", "/home.v1.Health/Check"),
        NV(":authority", "127.0.0.1:7436"), NV("content-type", "application/grpc"), NV("te", "trailers"),
        NV("authorization", "Bearer 0123456789abcdef0123456789abcdef0123456789a"),
    };
    double server_time = 0;
    long sent = 0;
    while (answered < calls) {
        for (int i = 0; i < batch && sent < calls; i++, sent++) {
            nghttp2_data_provider provider = {.read_callback = request_body};
            nghttp2_submit_request(client, NULL, request, sizeof request / sizeof *request, &provider, NULL);
        }
        nghttp2_session_send(client);
        double start = now();
        if (nghttp2_session_mem_recv(server, to_server.bytes, to_server.used) < 0) return 1;
        nghttp2_session_send(server);
        server_time += now() - start;
        to_server.used = 0;
        if (nghttp2_session_mem_recv(client, to_client.bytes, to_client.used) < 0) return 1;
        to_client.used = 0;
    }
    printf("%.0f\n", server_time / calls * 1e9);
    return 0;
}
