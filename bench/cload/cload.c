/*
 * cload: a small closed-loop load client in C that speaks both HomeRPC (docs/PROTOCOL.md) and
 * Redis's RESP, with one code path for both: every connection keeps DEPTH requests in flight, and
 * each complete reply is answered by one new request, written together with the others that the
 * same read completed. Requests are pre-encoded; a reply is only parsed far enough to find its end
 * and its status. It exists so that a server comparison is not limited by our Swift load generator
 * (which spends more per call on our protocol than on RESP): with it both servers saturate.
 *
 *   cload hrpc  HOST PORT CONNECTIONS DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]
 *   cload redis HOST PORT CONNECTIONS DEPTH SECONDS WARMUP ARG...     (e.g. GET key)
 *
 * With TOKEN-FILE, each HomeRPC connection first authenticates with the bearer token in it (on a call
 * of METHOD with an empty request, whose answer is not counted). Prints one line: calls per second
 * over SECONDS after WARMUP. Exits 1 on any error reply.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum protocol { HRPC, REDIS };

struct buffer {
    unsigned char *bytes;
    size_t used, capacity;
};

struct connection {
    int fd;
    uint32_t next_stream;
    struct buffer in, out;
    size_t out_sent;
    int watching_output; /* EPOLLOUT is on: a write was cut short */
};

static enum protocol protocol;
static struct buffer request_template; /* one request; for HRPC its stream ids are patched */
static size_t message_offset;          /* HRPC: where the MESSAGE frame starts in the template */
static long long errors;

static void die(const char *what) {
    perror(what);
    exit(2);
}

static void reserve(struct buffer *b, size_t more) {
    if (b->used + more <= b->capacity) return;
    b->capacity = (b->used + more) * 2;
    b->bytes = realloc(b->bytes, b->capacity);
    if (!b->bytes) die("realloc");
}

static void append(struct buffer *b, const void *bytes, size_t count) {
    reserve(b, count);
    memcpy(b->bytes + b->used, bytes, count);
    b->used += count;
}

static void put32(unsigned char *p, uint32_t v) {
    p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

static uint32_t get32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* A HomeRPC frame header: length, type, flags, stream id. */
static void frame_header(struct buffer *b, uint32_t length, unsigned char type, unsigned char flags, uint32_t stream) {
    unsigned char h[10];
    put32(h, length);
    h[4] = type, h[5] = flags;
    put32(h + 6, stream);
    append(b, h, 10);
}

/* CALL_START (no timeout) with the given metadata, then the request MESSAGE with END_STREAM. */
static void hrpc_call(struct buffer *b, const char *method, const unsigned char *request, size_t request_length,
                      const char *token, uint32_t stream) {
    size_t method_length = strlen(method);
    char authorization[600] = "";
    if (token) snprintf(authorization, sizeof authorization, "Bearer %s", token);
    size_t value_length = strlen(authorization);
    size_t payload = 2 + method_length + 4 + 2 + (token ? 1 + 13 + 2 + value_length : 0);
    frame_header(b, payload, 0x02, 0, stream);
    unsigned char field[4] = {method_length >> 8, method_length};
    append(b, field, 2);
    append(b, method, method_length);
    unsigned char timeout_and_count[6] = {0, 0, 0, 0, 0, token ? 1 : 0};
    append(b, timeout_and_count, 6);
    if (token) {
        unsigned char key_length = 13;
        append(b, &key_length, 1);
        append(b, "authorization", 13);
        field[0] = value_length >> 8, field[1] = value_length;
        append(b, field, 2);
        append(b, authorization, value_length);
    }
    frame_header(b, request_length, 0x03, 0x01, stream);
    append(b, request, request_length);
}

/* How many bytes the first complete reply in `bytes` takes (0 if incomplete); counts errors. */
static size_t reply_length(const unsigned char *bytes, size_t count) {
    if (protocol == HRPC) {
        size_t offset = 0;
        for (;;) { /* frames until this call's CALL_END */
            if (count - offset < 10) return 0;
            size_t frame = 10 + (size_t)get32(bytes + offset);
            if (count - offset < frame) return 0;
            unsigned char type = bytes[offset + 4];
            if (type == 0x04) {
                if (frame < 12 || bytes[offset + 10] != 0 || bytes[offset + 11] != 0) errors++;
                return offset + frame;
            }
            if (type != 0x03) {
                fprintf(stderr, "unexpected frame type %d\n", type);
                exit(2);
            }
            offset += frame;
        }
    }
    const unsigned char *end = memchr(bytes, '\n', count);
    if (!end) return 0;
    size_t line = (size_t)(end - bytes) + 1;
    if (bytes[0] == '-') errors++;
    if (bytes[0] != '$') return line;
    long length = strtol((const char *)bytes + 1, NULL, 10);
    if (length < 0) return line;
    return count >= line + (size_t)length + 2 ? line + (size_t)length + 2 : 0;
}

static void queue_request(struct connection *c) {
    size_t at = c->out.used;
    append(&c->out, request_template.bytes, request_template.used);
    if (protocol == HRPC) {
        put32(c->out.bytes + at + 6, c->next_stream);
        put32(c->out.bytes + at + message_offset + 6, c->next_stream);
        c->next_stream++;
    }
}

static void flush(struct connection *c) {
    while (c->out_sent < c->out.used) {
        ssize_t n = write(c->fd, c->out.bytes + c->out_sent, c->out.used - c->out_sent);
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0) die("write");
        c->out_sent += n;
    }
    c->out.used = c->out_sent = 0;
}

/* Asks for EPOLLOUT exactly while a write is cut short. */
static void watch_output(int poll, struct connection *c) {
    if ((c->out.used > 0) == c->watching_output) return;
    c->watching_output = c->out.used > 0;
    struct epoll_event event = {.events = EPOLLIN | (c->watching_output ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(poll, EPOLL_CTL_MOD, c->fd, &event) < 0) die("epoll_ctl");
}

/* Blocking read of exactly `count` bytes (set-up only). */
static void read_exactly(int fd, unsigned char *into, size_t count) {
    for (size_t got = 0; got < count;) {
        ssize_t n = read(fd, into + got, count - got);
        if (n <= 0) die("read during set-up");
        got += n;
    }
}

static int open_connection(const char *host, int port, const char *method, const char *token) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &address.sin_addr) != 1) die("address");
    if (connect(fd, (struct sockaddr *)&address, sizeof address) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (protocol == HRPC) {
        struct buffer hello = {0};
        append(&hello, "HRPC\r\n\x00\x01", 8);
        frame_header(&hello, 0, 0x01, 0, 0); /* SETTINGS: the defaults */
        if (token) hrpc_call(&hello, method, NULL, 0, token, 1); /* authenticates the connection */
        if (write(fd, hello.bytes, hello.used) != (ssize_t)hello.used) die("write hello");
        free(hello.bytes);
        unsigned char header[10];
        read_exactly(fd, header, 8); /* preface */
        read_exactly(fd, header, 10); /* SETTINGS */
        unsigned char skip[256];
        if (get32(header) > sizeof skip || header[4] != 0x01) die("server settings");
        read_exactly(fd, skip, get32(header));
        if (token) { /* the authenticating call's reply, whatever its answer to the empty request */
            for (;;) {
                read_exactly(fd, header, 10);
                size_t length = get32(header);
                unsigned char *payload = malloc(length + 1);
                read_exactly(fd, payload, length);
                int end = header[4] == 0x04, code = length >= 2 ? payload[0] << 8 | payload[1] : -1;
                free(payload);
                if (end && code == 16) {
                    fprintf(stderr, "the token was refused\n");
                    exit(2);
                }
                if (end) break;
            }
        }
    }
    return fd;
}

/* The first line of the file: a bearer token. */
static char *read_token(const char *path) {
    static char token[512];
    FILE *file = fopen(path, "r");
    if (!file || !fgets(token, sizeof token, file)) die(path);
    fclose(file);
    token[strcspn(token, "\r\n")] = 0;
    return token;
}

static unsigned char *from_hex(const char *hex, size_t *length) {
    *length = strlen(hex) / 2;
    unsigned char *bytes = malloc(*length + 1);
    for (size_t i = 0; i < *length; i++) sscanf(hex + 2 * i, "%2hhx", &bytes[i]);
    return bytes;
}

int main(int argc, char **argv) {
    if (argc < 9) {
        fprintf(stderr, "usage: cload hrpc HOST PORT CONNECTIONS DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]\n"
                        "       cload redis HOST PORT CONNECTIONS DEPTH SECONDS WARMUP ARG...\n");
        return 2;
    }
    protocol = strcmp(argv[1], "redis") == 0 ? REDIS : HRPC;
    const char *host = argv[2];
    int port = atoi(argv[3]), connections = atoi(argv[4]), depth = atoi(argv[5]);
    double seconds = atof(argv[6]), warmup = atof(argv[7]);
    const char *method = argv[8], *token = NULL;
    if (protocol == HRPC) {
        size_t request_length;
        unsigned char *request = from_hex(argc > 9 ? argv[9] : "", &request_length);
        token = argc > 10 ? read_token(argv[10]) : NULL;
        hrpc_call(&request_template, method, request, request_length, NULL, 0);
        message_offset = request_template.used - 10 - request_length;
        free(request);
    } else {
        char header[32];
        snprintf(header, sizeof header, "*%d\r\n", argc - 8);
        append(&request_template, header, strlen(header));
        for (int i = 8; i < argc; i++) {
            snprintf(header, sizeof header, "$%zu\r\n", strlen(argv[i]));
            append(&request_template, header, strlen(header));
            append(&request_template, argv[i], strlen(argv[i]));
            append(&request_template, "\r\n", 2);
        }
    }

    int poll = epoll_create1(0);
    struct connection *all = calloc(connections, sizeof *all);
    for (int i = 0; i < connections; i++) {
        struct connection *c = &all[i];
        c->fd = open_connection(host, port, method, token);
        c->next_stream = 3;
        if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0) die("fcntl");
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(poll, EPOLL_CTL_ADD, c->fd, &event) < 0) die("epoll_ctl");
        for (int k = 0; k < depth; k++) queue_request(c);
        flush(c);
    }

    double start = now(), measure_from = start + warmup, end = measure_from + seconds;
    long long counted = 0;
    int measuring = 0;
    struct epoll_event events[256];
    for (;;) {
        int ready = epoll_wait(poll, events, 256, 10);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < ready; e++) {
            struct connection *c = events[e].data.ptr;
            if (events[e].events & EPOLLOUT) flush(c), watch_output(poll, c);
            if (!(events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            reserve(&c->in, 65536);
            ssize_t n = read(c->fd, c->in.bytes + c->in.used, c->in.capacity - c->in.used);
            if (n == 0) {
                fprintf(stderr, "the server closed a connection\n");
                return 2;
            }
            if (n < 0 && errno == EAGAIN) continue;
            if (n < 0) die("read");
            c->in.used += n;
            size_t offset = 0, length;
            while ((length = reply_length(c->in.bytes + offset, c->in.used - offset)) > 0) {
                offset += length;
                if (measuring) counted++;
                queue_request(c);
            }
            memmove(c->in.bytes, c->in.bytes + offset, c->in.used - offset);
            c->in.used -= offset;
            flush(c);
            watch_output(poll, c);
        }
        double t = now();
        if (!measuring && t >= measure_from) measuring = 1, measure_from = t, counted = 0;
        if (t >= end) {
            printf("%.0f\n", counted / (t - measure_from));
            if (errors) fprintf(stderr, "%lld error replies\n", errors);
            return errors ? 1 : 0;
        }
    }
}
