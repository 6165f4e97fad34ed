/*
 * cload: a small closed-loop load client in C that speaks HomeRPC (docs/PROTOCOL.md), Redis's RESP
 * and gRPC (HTTP/2, through libnghttp2), with one code path for all: every connection keeps DEPTH
 * requests in flight, and each complete reply is answered by one new request, written together with
 * the others that the same read completed. Requests are pre-encoded; a reply is only parsed far
 * enough to find its end and its status. It exists so that a server comparison is not limited by
 * our Swift load generator (which spends more per call on our protocol than on RESP): with it both
 * servers saturate.
 *
 *   cload [--deadline-ms MS] [--keys] [--rate CALLS-PER-SECOND [--burst BURST] [--histogram FILE]] hrpc  HOST PORT CONNECTIONS DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]
 *   cload [--rate CALLS-PER-SECOND [--burst BURST] [--histogram FILE]] redis HOST PORT CONNECTIONS DEPTH SECONDS WARMUP ARG...  (e.g. GET key)
 *   cload [--count] grpc HOST PORT CONNECTIONS DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]
 *   cload accessory HOST PORT ATTACH-REQUEST-HEX [EXTRA-CREDIT]
 *
 * gRPC runs the closed loop only. Its calls are HTTP/2 streams of one connection each (a POST to
 * /METHOD with the length-prefixed request, the token as `authorization: Bearer` on every call, as
 * gRPC has no per-connection principal); a call counts when its stream closes, and is an error
 * unless its trailers said grpc-status 0.
 *
 * HomeRPC calls carry what the Swift SDK's carry: a deadline (--deadline-ms, 30000 by default as in
 * the SDK; 0 for none) and, with --keys, a fresh idempotency-key (36 characters, as the SDK's UUIDs)
 * on each, as the SDK sends with every mutation. The token goes on the connection's first call only,
 * as the SDK sends it.
 *
 * With TOKEN-FILE, each HomeRPC connection first authenticates with the bearer token in it (on a call
 * of METHOD with an empty request, whose answer is not counted). Prints one line: calls per second
 * over SECONDS after WARMUP. Exits 1 on any error reply.
 *
 * With --rate, the load is an open loop instead: calls are due on a fixed schedule whatever the
 * answers, in bursts of BURST calls on a connection (1 unless --burst is given; a burst is what a
 * pipelining client sends at once), connection i's j-th burst at (j + i / CONNECTIONS) * BURST /
 * (RATE / CONNECTIONS) seconds after the start, so that the bursts of all connections are spread
 * evenly over time. A due call is sent as soon as the client sees it (it spins between passes over
 * the connections) and its connection has fewer than DEPTH calls in flight. Its latency counts from
 * when it was due, not from when it was sent, so a server that falls behind shows in every call
 * that waited (the coordinated-omission correction of wrk2 and HdrHistogram). The calls due during
 * the SECONDS after WARMUP are measured; after them no new call is sent and the client waits for
 * those answers (at most 30 s). Prints one line: calls answered per second during the window, then
 * the latency percentiles 50, 90, 99, 99.9 and the maximum, in microseconds
 * (within 1%).
 *
 * A single run's p99 swings several-fold on a shared machine, for either server. So that many
 * short alternated runs can be compared as one sample each, --histogram FILE appends the run's
 * latency histogram to FILE (one "bucket count" line per non-empty bucket), and
 *
 *   cload --percentiles FILE
 *
 * prints the percentiles of every histogram appended there, pooled: "p50 p90 p99 p99.9 max" in µs.
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

#include <nghttp2/nghttp2.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

enum protocol { HRPC, REDIS, GRPC };

struct buffer {
    unsigned char *bytes;
    size_t used, capacity;
};

struct connection {
    int fd;
    int index;
    uint32_t next_stream;
    long long issued, answered; /* calls sent and answered; with --rate, k of the next call is `issued` */
    struct buffer in, out;
    size_t out_sent;
    int watching_output; /* EPOLLOUT is on: a write was cut short */
    nghttp2_session *h2; /* gRPC only */
};

static enum protocol protocol;

/* --tls CA-FILE: every connection speaks TLS (OpenSSL, the same library both servers use), trusting
 * CA-FILE; our protocol offers ALPN hrpc/1, gRPC h2, Redis none. One session per descriptor. */
static SSL_CTX *tls_context;
static SSL *tls_sessions[65536];

static ssize_t io_read(int fd, void *into, size_t count) {
    SSL *session = tls_sessions[fd];
    if (!session) return read(fd, into, count);
    int n = SSL_read(session, into, (int)count);
    if (n > 0) return n;
    int error = SSL_get_error(session, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (error == SSL_ERROR_ZERO_RETURN) return 0;
    ERR_print_errors_fp(stderr);
    errno = EPROTO;
    return -1;
}

static ssize_t io_write(int fd, const void *bytes, size_t count) {
    SSL *session = tls_sessions[fd];
    if (!session) return write(fd, bytes, count);
    int n = SSL_write(session, bytes, (int)count);
    if (n > 0) return n;
    int error = SSL_get_error(session, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    ERR_print_errors_fp(stderr);
    errno = EPROTO;
    return -1;
}
static uint32_t server_max_streams = 100; /* the server's MAX_CONCURRENT_STREAMS, from its SETTINGS */
static struct buffer request_template; /* one request; for HRPC its stream ids are patched */
static size_t message_offset;          /* HRPC: where the MESSAGE frame starts in the template */
static long long errors;
/* Closed loop: whether the window has started, and the calls answered in it. */
static int measuring;
static long long counted;

/* Open loop (--rate): each connection's calls per second, and the schedule's origin and window. */
static double burst_period, schedule_start, window_start, window_end;
static int connection_count, depth_limit, burst = 1;

/* Latencies in nanoseconds, log-linear buckets of 1/128 of a power of two (HdrHistogram's layout
 * with two significant digits): bucket_of() maps a value to its bucket, bucket_top() back. */
#define SUB_BUCKETS 128
static long long histogram[64 * SUB_BUCKETS], recorded;

static int bucket_of(uint64_t nanoseconds) {
    if (nanoseconds < 2 * SUB_BUCKETS) return (int)nanoseconds;
    int shift = 63 - __builtin_clzll(nanoseconds) - 7; /* keeps the top 8 bits: 128...255 */
    return (shift + 1) * SUB_BUCKETS + (int)(nanoseconds >> shift) - SUB_BUCKETS;
}

static uint64_t bucket_top(int bucket) {
    if (bucket < 2 * SUB_BUCKETS) return (uint64_t)bucket;
    int shift = bucket / SUB_BUCKETS - 1;
    return ((uint64_t)(bucket % SUB_BUCKETS + SUB_BUCKETS + 1) << shift) - 1;
}

static double percentile_us(double fraction) {
    long long rank = (long long)(fraction * recorded + 0.5), seen = 0;
    if (rank < 1) rank = 1;
    for (int b = 0; b < 64 * SUB_BUCKETS; b++)
        if ((seen += histogram[b]) >= rank) return bucket_top(b) / 1e3;
    return 0;
}

static void print_percentiles(void) {
    printf("%.1f %.1f %.1f %.1f %.1f\n", percentile_us(0.5), percentile_us(0.9), percentile_us(0.99),
           percentile_us(0.999), percentile_us(1.0));
}

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

/* An idempotency key as the SDK sends one (a UUID's 36 characters): a fixed prefix from the process,
 * then 12 hex digits of a count that queue_request writes in place for each call (KEY_COUNT_DIGITS). */
#define KEY_LENGTH 36
#define KEY_COUNT_DIGITS 12
static size_t key_offset;  /* HRPC with --keys: where the key's count digits lie in the template */
static uint64_t keys_sent; /* keys used so far, all connections */

/* CALL_START with `timeout_ms` (0: none), the token if any and, with `with_key`, an idempotency key
 * whose last KEY_COUNT_DIGITS are patched per call; then the request MESSAGE with END_STREAM. */
static void hrpc_call(struct buffer *b, const char *method, const unsigned char *request, size_t request_length,
                      const char *token, uint32_t stream, uint32_t timeout_ms, int with_key) {
    size_t method_length = strlen(method);
    char authorization[600] = "";
    if (token) snprintf(authorization, sizeof authorization, "Bearer %s", token);
    size_t value_length = strlen(authorization);
    size_t payload = 2 + method_length + 4 + 2 + (token ? 1 + 13 + 2 + value_length : 0) +
                     (with_key ? 1 + 15 + 2 + KEY_LENGTH : 0);
    frame_header(b, payload, 0x02, 0, stream);
    unsigned char field[4] = {method_length >> 8, method_length};
    append(b, field, 2);
    append(b, method, method_length);
    unsigned char timeout_and_count[6];
    put32(timeout_and_count, timeout_ms);
    timeout_and_count[4] = 0, timeout_and_count[5] = (token ? 1 : 0) + (with_key ? 1 : 0);
    append(b, timeout_and_count, 6);
    if (token) {
        unsigned char key_length = 13;
        append(b, &key_length, 1);
        append(b, "authorization", 13);
        field[0] = value_length >> 8, field[1] = value_length;
        append(b, field, 2);
        append(b, authorization, value_length);
    }
    if (with_key) {
        unsigned char key_length = 15;
        append(b, &key_length, 1);
        append(b, "idempotency-key", 15);
        field[0] = 0, field[1] = KEY_LENGTH;
        append(b, field, 2);
        char key[KEY_LENGTH + 1];
        snprintf(key, sizeof key, "%08X-0000-4000-8000-%012X", (unsigned)getpid(), 0);
        append(b, key, KEY_LENGTH);
        key_offset = b->used - KEY_COUNT_DIGITS;
    }
    frame_header(b, request_length, 0x03, 0x01, stream);
    append(b, request, request_length);
}

/* How many bytes the first complete reply in `bytes` takes (0 if incomplete); counts errors. For
 * HomeRPC, `stream` is set to the stream id the reply ends. */
static size_t reply_length(const unsigned char *bytes, size_t count, uint32_t *stream) {
    if (protocol == HRPC) {
        size_t offset = 0;
        for (;;) { /* frames until this call's CALL_END */
            if (count - offset < 10) return 0;
            size_t frame = 10 + (size_t)get32(bytes + offset);
            if (count - offset < frame) return 0;
            unsigned char type = bytes[offset + 4];
            if (type == 0x04) {
                if (frame < 12 || bytes[offset + 10] != 0 || bytes[offset + 11] != 0) errors++;
                *stream = get32(bytes + offset + 6);
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

static void grpc_submit(struct connection *c);

static void queue_request(struct connection *c) {
    c->issued++;
    if (protocol == GRPC) {
        grpc_submit(c);
        return;
    }
    size_t at = c->out.used;
    append(&c->out, request_template.bytes, request_template.used);
    if (protocol == HRPC) {
        put32(c->out.bytes + at + 6, c->next_stream);
        put32(c->out.bytes + at + message_offset + 6, c->next_stream);
        c->next_stream++;
        if (key_offset) { /* a fresh key: the count's hex digits, least significant last */
            uint64_t count = ++keys_sent;
            unsigned char *digit = c->out.bytes + at + key_offset + KEY_COUNT_DIGITS;
            for (int i = 0; i < KEY_COUNT_DIGITS; i++, count >>= 4) *--digit = "0123456789ABCDEF"[count & 0xF];
        }
    }
}

static void flush(struct connection *c) {
    while (c->out_sent < c->out.used) {
        ssize_t n = io_write(c->fd, c->out.bytes + c->out_sent, c->out.used - c->out_sent);
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0) die("write");
        c->out_sent += n;
    }
    c->out.used = c->out_sent = 0;
}

/* gRPC: the request's headers and its length-prefixed message, the same for every call. */
static nghttp2_nv grpc_headers[7];
static size_t grpc_header_count;
static struct buffer grpc_message;

static nghttp2_nv header(const char *name, const char *value) {
    return (nghttp2_nv){(uint8_t *)name, (uint8_t *)value, strlen(name), strlen(value), NGHTTP2_NV_FLAG_NONE};
}

static void grpc_prepare(const char *host, const char *port, const char *method, const unsigned char *request,
                         size_t request_length, const char *token) {
    static char path[512], authority[300], authorization[600];
    snprintf(path, sizeof path, "/%s", method);
    snprintf(authority, sizeof authority, "%s:%s", host, port);
    nghttp2_nv *h = grpc_headers;
    *h++ = header(":method", "POST"), *h++ = header(":scheme", "http"), *h++ = header(":path", path);
    *h++ = header(":authority", authority), *h++ = header("content-type", "application/grpc");
    *h++ = header("te", "trailers");
    if (token) {
        snprintf(authorization, sizeof authorization, "Bearer %s", token);
        *h++ = header("authorization", authorization);
    }
    grpc_header_count = (size_t)(h - grpc_headers);
    unsigned char prefix[5] = {0}; /* not compressed, then the length */
    put32(prefix + 1, (uint32_t)request_length);
    append(&grpc_message, prefix, 5);
    append(&grpc_message, request, request_length);
}

static ssize_t grpc_body(nghttp2_session *session, int32_t stream, uint8_t *into, size_t room, uint32_t *flags,
                         nghttp2_data_source *source, void *user) {
    (void)session, (void)stream, (void)source, (void)user;
    if (room < grpc_message.used) return NGHTTP2_ERR_CALLBACK_FAILURE; /* requests are small */
    memcpy(into, grpc_message.bytes, grpc_message.used);
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return (ssize_t)grpc_message.used;
}

static void grpc_submit(struct connection *c) {
    nghttp2_data_provider body = {.read_callback = grpc_body};
    if (nghttp2_submit_request(c->h2, NULL, grpc_headers, grpc_header_count, &body, NULL) < 0) {
        fprintf(stderr, "nghttp2_submit_request failed\n");
        exit(2);
    }
}

/* nghttp2's output goes to the connection's buffer, written by flush() like the other protocols'. */
static ssize_t grpc_send(nghttp2_session *session, const uint8_t *bytes, size_t count, int flags, void *user) {
    (void)session, (void)flags;
    append(&((struct connection *)user)->out, bytes, count);
    return (ssize_t)count;
}

/* A call succeeded when its trailers (or a trailers-only answer) say grpc-status 0: the stream is
 * marked then, and checked when it closes. */
static int grpc_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name, size_t name_length,
                       const uint8_t *value, size_t value_length, uint8_t flags, void *user) {
    (void)flags, (void)user;
    if (frame->hd.type == NGHTTP2_HEADERS && name_length == 11 && memcmp(name, "grpc-status", 11) == 0 &&
        value_length == 1 && value[0] == '0')
        nghttp2_session_set_stream_user_data(session, frame->hd.stream_id, (void *)1);
    return 0;
}

static int grpc_stream_closed(nghttp2_session *session, int32_t stream, uint32_t error_code, void *user) {
    struct connection *c = user;
    if (error_code != 0 || nghttp2_session_get_stream_user_data(session, stream) == NULL) errors++;
    if (measuring) counted++;
    c->answered++;
    queue_request(c);
    return 0;
}

static void grpc_start(struct connection *c) {
    nghttp2_session_callbacks *callbacks;
    if (nghttp2_session_callbacks_new(&callbacks) != 0) die("nghttp2_session_callbacks_new");
    nghttp2_session_callbacks_set_send_callback(callbacks, grpc_send);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, grpc_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, grpc_stream_closed);
    if (nghttp2_session_client_new(&c->h2, callbacks, c) != 0) die("nghttp2_session_client_new");
    nghttp2_session_callbacks_del(callbacks);
    if (nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, NULL, 0) != 0) die("nghttp2_submit_settings");
}

/* Feeds what was read to nghttp2 (which calls back for each closed stream), then queues its answer. */
static void grpc_receive(struct connection *c, const unsigned char *bytes, size_t count) {
    if (nghttp2_session_mem_recv(c->h2, bytes, count) < 0 || nghttp2_session_send(c->h2) != 0) {
        fprintf(stderr, "HTTP/2 error from the server\n");
        exit(2);
    }
}

/* When connection c's k-th call is due, with --rate. */
static double due_time(const struct connection *c, long long k) {
    return schedule_start + ((double)(k / burst) + (double)c->index / connection_count) * burst_period;
}

/* With --rate: queues every call due by `now` (none due after the window) while fewer than DEPTH
 * are in flight. */
static void queue_due_calls(struct connection *c, double now) {
    double last = now < window_end ? now : window_end;
    double bursts = (last - schedule_start) / burst_period - (double)c->index / connection_count;
    if (bursts < 0) return; /* its first burst is not due yet */
    long long due = ((long long)bursts + 1) * burst - 1; /* the last call due */
    while (due >= 0 && last >= window_end && due_time(c, due) >= window_end) due--; /* none due at the end */
    while (c->issued <= due && c->issued - c->answered < depth_limit) queue_request(c);
}

/* With --rate: records the latency of connection c's k-th call, answered at `now`, if it was due in
 * the window. */
static void record_answer(const struct connection *c, long long k, double now) {
    double due = due_time(c, k);
    if (due < window_start || due >= window_end) return;
    histogram[bucket_of((uint64_t)((now - due) * 1e9))]++;
    recorded++;
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
        ssize_t n = io_read(fd, into + got, count - got);
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
    if (tls_context) {
        if (fd >= (int)(sizeof tls_sessions / sizeof *tls_sessions)) die("descriptor");
        SSL *session = SSL_new(tls_context);
        if (!session || SSL_set_fd(session, fd) != 1) die("SSL_new");
        if (SSL_connect(session) != 1) {
            ERR_print_errors_fp(stderr);
            die("TLS handshake");
        }
        tls_sessions[fd] = session;
    }
    if (protocol == HRPC) {
        struct buffer hello = {0};
        append(&hello, "HRPC\r\n\x00\x01", 8);
        frame_header(&hello, 0, 0x01, 0, 0); /* SETTINGS: the defaults */
        if (token) hrpc_call(&hello, method, NULL, 0, token, 1, 0, 0); /* authenticates the connection */
        if (io_write(fd, hello.bytes, hello.used) != (ssize_t)hello.used) die("write hello");
        free(hello.bytes);
        unsigned char header[10];
        read_exactly(fd, header, 8); /* preface */
        read_exactly(fd, header, 10); /* SETTINGS */
        unsigned char settings[256];
        if (get32(header) > sizeof settings || header[4] != 0x01) die("server settings");
        read_exactly(fd, settings, get32(header));
        for (size_t at = 0; at + 6 <= get32(header); at += 6)
            if ((settings[at] << 8 | settings[at + 1]) == 3) server_max_streams = get32(settings + at + 2);
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

/* --histogram: this run's non-empty buckets, appended to the file. */
static void append_histogram(const char *path) {
    FILE *file = fopen(path, "a");
    if (!file) die(path);
    for (int b = 0; b < 64 * SUB_BUCKETS; b++)
        if (histogram[b]) fprintf(file, "%d %lld\n", b, histogram[b]);
    if (fclose(file) != 0) die(path);
}

/* --percentiles: every histogram appended to the file, pooled. */
static int pooled_percentiles(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) die(path);
    int bucket;
    long long count;
    while (fscanf(file, "%d %lld", &bucket, &count) == 2) {
        if (bucket < 0 || bucket >= 64 * SUB_BUCKETS || count < 0) {
            fprintf(stderr, "%s: not a histogram line: %d %lld\n", path, bucket, count);
            return 2;
        }
        histogram[bucket] += count, recorded += count;
    }
    fclose(file);
    if (recorded == 0) {
        fprintf(stderr, "%s: no latencies\n", path);
        return 2;
    }
    print_percentiles();
    return 0;
}

/* Protobuf: reads a varint at *at (below end); returns 0 when it does not fit. */
static int read_varint(const unsigned char **at, const unsigned char *end, uint64_t *value) {
    *value = 0;
    for (int shift = 0; *at < end && shift < 64; shift += 7) {
        unsigned char byte = *(*at)++;
        *value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) return 1;
    }
    return 0;
}

/* The command id of a LinkMessage that carries a Command (field 4, whose field 1 is the id), or 0
 * for the link's other messages (Attached). Exits on a message it cannot read. */
static uint64_t command_id(const unsigned char *message, size_t length) {
    const unsigned char *at = message, *end = message + length;
    uint64_t key, value, id = 0;
    while (at < end) {
        if (!read_varint(&at, end, &key)) break;
        if ((key & 7) == 0) {
            if (!read_varint(&at, end, &value)) break;
            continue;
        }
        if ((key & 7) != 2 || !read_varint(&at, end, &value) || value > (uint64_t)(end - at)) break;
        if (key >> 3 == 4) { /* Command: its field 1 */
            const unsigned char *field = at, *command_end = at + value;
            uint64_t inner;
            while (field < command_end && read_varint(&field, command_end, &inner)) {
                if (inner == 0x08) return read_varint(&field, command_end, &id) ? id : 0;
                if ((inner & 7) == 0) {
                    if (!read_varint(&field, command_end, &inner)) break;
                } else if ((inner & 7) == 2) {
                    if (!read_varint(&field, command_end, &inner) || inner > (uint64_t)(command_end - field)) break;
                    field += inner;
                } else {
                    break;
                }
            }
            fprintf(stderr, "a command without an id\n");
            exit(2);
        }
        at += value;
    }
    if (at != end) {
        fprintf(stderr, "a link message that does not decode\n");
        exit(2);
    }
    return 0;
}

/*
 * cload accessory HOST PORT ATTACH-REQUEST-HEX: a paired accessory as cheap as cload's controllers,
 * for the forwarded write benchmarks (the Swift simulator spends several times a write's server
 * work per command, and shares the client's core). It attaches with the AttachRequest given (the
 * accessory id and the credential a simulator was paired with), prints "attached", then answers
 * every command at once with success (AnswerCommand, hap_status 0), with at most the server's
 * MAX_CONCURRENT_STREAMS - 1 answers in flight, granting the link's credit as it reads commands and
 * answering PINGs. With EXTRA-CREDIT, it grants the link that many messages beyond the protocol's
 * initial 64 as soon as it attaches (a bridge that expects bursts of commands; bench/accessory-window.sh).
 * Runs until killed; exits 1 if the link ends or an answer is refused.
 */
static int run_accessory(const char *host, int port, const char *attach_hex, uint32_t extra_credit) {
    int fd = open_connection(host, port, NULL, NULL);
    size_t attach_length;
    unsigned char *attach = from_hex(attach_hex, &attach_length);
    struct buffer in = {0}, out = {0}, answer = {0};
    hrpc_call(&out, "home.v1.AccessoryLink/Attach", attach, attach_length, NULL, 1, 0, 0);
    free(attach);
    if (extra_credit > 0) {
        unsigned char increment[4];
        put32(increment, extra_credit);
        frame_header(&out, 4, 0x06, 0, 1);
        append(&out, increment, 4);
    }
    hrpc_call(&answer, "home.v1.AccessoryLink/AnswerCommand", NULL, 0, NULL, 0, 0, 0);
    size_t answer_message = answer.used - 10; /* the empty request's MESSAGE header */
    answer.used = answer_message;             /* the CALL_START; each answer adds its own MESSAGE */
    uint64_t *queued = NULL;
    size_t queued_count = 0, queued_capacity = 0, queued_first = 0;
    uint32_t next_stream = 3, in_flight = 0, max_in_flight = server_max_streams > 1 ? server_max_streams - 1 : 1;
    for (;;) {
        if (out.used > 0) {
            for (size_t sent = 0; sent < out.used;) {
                ssize_t n = write(fd, out.bytes + sent, out.used - sent);
                if (n < 0) die("write");
                sent += (size_t)n;
            }
            out.used = 0;
        }
        reserve(&in, 65536);
        ssize_t n = read(fd, in.bytes + in.used, in.capacity - in.used);
        if (n == 0) {
            fprintf(stderr, "the server closed the accessory's connection\n");
            return 1;
        }
        if (n < 0) die("read");
        in.used += (size_t)n;
        size_t offset = 0;
        uint32_t commands = 0;
        while (in.used - offset >= 10) {
            unsigned char *frame = in.bytes + offset;
            size_t length = get32(frame);
            if (in.used - offset < 10 + length) break;
            unsigned char type = frame[4];
            uint32_t stream = get32(frame + 6);
            if (type == 0x03 && stream == 1) {
                uint64_t id = command_id(frame + 10, length);
                if (id == 0) {
                    printf("attached\n");
                    fflush(stdout);
                } else {
                    if (queued_first + queued_count == queued_capacity) {
                        if (queued_first > 0) {
                            memmove(queued, queued + queued_first, queued_count * sizeof *queued);
                            queued_first = 0;
                        } else {
                            queued_capacity = queued_capacity ? 2 * queued_capacity : 1024;
                            queued = realloc(queued, queued_capacity * sizeof *queued);
                            if (!queued) die("realloc");
                        }
                    }
                    queued[queued_first + queued_count++] = id;
                }
                commands++;
            } else if (type == 0x04 && stream == 1) {
                fprintf(stderr, "the link ended (status %d)\n", length >= 2 ? frame[10] << 8 | frame[11] : -1);
                return 1;
            } else if (type == 0x04) {
                if (length < 2 || frame[10] != 0 || frame[11] != 0) {
                    fprintf(stderr, "an answer was refused (status %d)\n", length >= 2 ? frame[10] << 8 | frame[11] : -1);
                    return 1;
                }
                in_flight--;
            } else if (type == 0x07) {
                frame_header(&out, (uint32_t)length, 0x08, 0, 0);
                append(&out, frame + 10, length);
            } else if (type == 0x09) {
                fprintf(stderr, "the server sent GOAWAY\n");
                return 1;
            }
            offset += 10 + length;
        }
        memmove(in.bytes, in.bytes + offset, in.used - offset);
        in.used -= offset;
        if (commands > 0) {
            unsigned char increment[4];
            put32(increment, commands);
            frame_header(&out, 4, 0x06, 0, 1);
            append(&out, increment, 4);
        }
        while (queued_count > 0 && in_flight < max_in_flight) {
            uint64_t id = queued[queued_first++];
            queued_count--;
            unsigned char request[11] = {0x08};
            size_t request_length = 1;
            do {
                request[request_length++] = (unsigned char)(id & 0x7f) | (id > 0x7f ? 0x80 : 0);
                id >>= 7;
            } while (id > 0);
            size_t at = out.used;
            append(&out, answer.bytes, answer.used);
            put32(out.bytes + at + 6, next_stream);
            frame_header(&out, (uint32_t)request_length, 0x03, 0x01, next_stream);
            append(&out, request, request_length);
            next_stream += 2;
            in_flight++;
        }
    }
}

int main(int argc, char **argv) {
    double rate = 0;
    const char *histogram_path = NULL;
    /* HomeRPC calls go as the Swift SDK sends them: a 30 s deadline on each, and, with --keys, a
     * fresh idempotency key on each (the SDK's mutations carry one). */
    uint32_t deadline_ms = 30000;
    int with_keys = 0;
    /* --count: print how many calls were answered in the window instead of the rate (for counting
     * the server's instructions per call, bench/instructions.sh). */
    int print_count = 0;
    for (;;) {
        if (argc > 2 && strcmp(argv[1], "--deadline-ms") == 0) {
            deadline_ms = (uint32_t)strtoul(argv[2], NULL, 10);
            argv += 2, argc -= 2;
        } else if (argc > 1 && strcmp(argv[1], "--keys") == 0) {
            with_keys = 1;
            argv += 1, argc -= 1;
        } else if (argc > 1 && strcmp(argv[1], "--count") == 0) {
            print_count = 1;
            argv += 1, argc -= 1;
        } else if (argc > 2 && strcmp(argv[1], "--tls") == 0) {
            tls_context = SSL_CTX_new(TLS_client_method());
            if (!tls_context || SSL_CTX_load_verify_locations(tls_context, argv[2], NULL) != 1) die("--tls CA-FILE");
            SSL_CTX_set_verify(tls_context, SSL_VERIFY_PEER, NULL);
            SSL_CTX_set_mode(tls_context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
            argv += 2, argc -= 2;
        } else {
            break;
        }
    }
    if (argc == 3 && strcmp(argv[1], "--percentiles") == 0) return pooled_percentiles(argv[2]);
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "accessory") == 0) {
        protocol = HRPC;
        return run_accessory(argv[2], atoi(argv[3]), argv[4], argc == 6 ? (uint32_t)strtoul(argv[5], NULL, 10) : 0);
    }
    if (argc > 2 && strcmp(argv[1], "--rate") == 0) {
        rate = atof(argv[2]);
        argv += 2, argc -= 2;
        if (argc > 2 && strcmp(argv[1], "--burst") == 0) {
            burst = atoi(argv[2]);
            argv += 2, argc -= 2;
        }
        if (argc > 2 && strcmp(argv[1], "--histogram") == 0) {
            histogram_path = argv[2];
            argv += 2, argc -= 2;
        }
    }
    if (argc < 9 || rate < 0 || burst < 1) {
        fprintf(stderr, "usage: cload [--deadline-ms MS] [--keys] [--tls CA-FILE] [--rate CALLS-PER-SECOND [--burst BURST] [--histogram FILE]] hrpc HOST PORT CONNECTIONS "
                        "DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]\n"
                        "       cload [--rate CALLS-PER-SECOND [--burst BURST] [--histogram FILE]] redis HOST PORT CONNECTIONS "
                        "DEPTH SECONDS WARMUP ARG...\n"
                        "       cload [--count] grpc HOST PORT CONNECTIONS DEPTH SECONDS WARMUP METHOD REQUEST-HEX [TOKEN-FILE]\n"
                        "       cload accessory HOST PORT ATTACH-REQUEST-HEX\n"
                        "       cload --percentiles FILE\n");
        return 2;
    }
    protocol = strcmp(argv[1], "redis") == 0 ? REDIS : strcmp(argv[1], "grpc") == 0 ? GRPC : HRPC;
    if (tls_context && protocol != REDIS) {
        static const unsigned char hrpc_alpn[] = {6, 'h', 'r', 'p', 'c', '/', '1'}, h2_alpn[] = {2, 'h', '2'};
        if (protocol == HRPC) SSL_CTX_set_alpn_protos(tls_context, hrpc_alpn, sizeof hrpc_alpn);
        else SSL_CTX_set_alpn_protos(tls_context, h2_alpn, sizeof h2_alpn);
    }
    if (protocol == GRPC && rate > 0) {
        fprintf(stderr, "cload: gRPC runs the closed loop only\n");
        return 2;
    }
    const char *host = argv[2];
    int port = atoi(argv[3]), connections = atoi(argv[4]), depth = atoi(argv[5]);
    double seconds = atof(argv[6]), warmup = atof(argv[7]);
    const char *method = argv[8], *token = NULL;
    if (protocol != REDIS) {
        size_t request_length;
        unsigned char *request = from_hex(argc > 9 ? argv[9] : "", &request_length);
        token = argc > 10 ? read_token(argv[10]) : NULL;
        if (protocol == GRPC) {
            grpc_prepare(host, argv[3], method, request, request_length, token);
            token = NULL; /* sent with every call, not on a call of its own */
        } else {
            hrpc_call(&request_template, method, request, request_length, NULL, 0, deadline_ms, with_keys);
            message_offset = request_template.used - 10 - request_length;
        }
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
        c->index = i;
        c->next_stream = 3;
        if (protocol == GRPC) grpc_start(c);
        if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0) die("fcntl");
        struct epoll_event event = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(poll, EPOLL_CTL_ADD, c->fd, &event) < 0) die("epoll_ctl");
        if (rate > 0) continue;
        for (int k = 0; k < depth; k++) queue_request(c);
        if (protocol == GRPC) grpc_receive(c, NULL, 0);
        flush(c);
    }

    double start = now(), measure_from = start + warmup, end = measure_from + seconds;
    struct epoll_event events[256];
    burst_period = burst * connections / (rate > 0 ? rate : 1), connection_count = connections, depth_limit = depth;
    schedule_start = start, window_start = measure_from, window_end = end;
    for (;;) {
        if (rate > 0) {
            double t = now();
            for (int i = 0; i < connections; i++) {
                queue_due_calls(&all[i], t);
                flush(&all[i]);
                watch_output(poll, &all[i]);
            }
        }
        /* An open loop spins, so that a due call waits for one pass, not for a poll timeout. */
        int ready = epoll_wait(poll, events, 256, rate > 0 ? 0 : 10);
        if (ready < 0 && errno != EINTR) die("epoll_wait");
        double answered_at = rate > 0 && ready > 0 ? now() : 0;
        for (int e = 0; e < ready; e++) {
            struct connection *c = events[e].data.ptr;
            if (events[e].events & EPOLLOUT) flush(c), watch_output(poll, c);
            if (!(events[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) continue;
            reserve(&c->in, 65536);
            ssize_t n = io_read(c->fd, c->in.bytes + c->in.used, c->in.capacity - c->in.used);
            if (n < 0 && errno == EAGAIN) continue;
            if (n == 0) {
                fprintf(stderr, "the server closed a connection\n");
                return 2;
            }
            if (n < 0 && errno == EAGAIN) continue;
            if (n < 0) die("read");
            if (protocol == GRPC) {
                grpc_receive(c, c->in.bytes, (size_t)n);
                flush(c);
                watch_output(poll, c);
                continue;
            }
            c->in.used += n;
            size_t offset = 0, length;
            uint32_t stream = 0;
            while ((length = reply_length(c->in.bytes + offset, c->in.used - offset, &stream)) > 0) {
                offset += length;
                if (measuring && (rate == 0 || answered_at < end)) counted++;
                if (rate > 0) /* a HomeRPC call's k is in its stream id; RESP answers in order */
                    record_answer(c, protocol == HRPC ? (long long)stream - 3 : c->answered, answered_at);
                c->answered++;
                if (rate == 0) queue_request(c);
            }
            if (rate > 0) queue_due_calls(c, answered_at);
            memmove(c->in.bytes, c->in.bytes + offset, c->in.used - offset);
            c->in.used -= offset;
            flush(c);
            watch_output(poll, c);
        }
        double t = now();
        if (rate > 0) {
            if (!measuring && t >= measure_from) measuring = 1, counted = 0;
            int drained = t >= end;
            for (int i = 0; drained && i < connections; i++) drained = all[i].answered == all[i].issued;
            if (drained || t >= end + 30) {
                if (!drained) fprintf(stderr, "calls still unanswered 30 s after the window\n");
                printf("%.0f ", counted / seconds);
                print_percentiles();
                if (histogram_path) append_histogram(histogram_path);
                if (errors) fprintf(stderr, "%lld error replies\n", errors);
                return errors || !drained ? 1 : 0;
            }
            continue;
        }
        if (!measuring && t >= measure_from) measuring = 1, measure_from = t, counted = 0;
        if (t >= end) {
            if (print_count)
                printf("%lld\n", counted);
            else
                printf("%.0f\n", counted / (t - measure_from));
            if (errors) fprintf(stderr, "%lld error replies\n", errors);
            return errors ? 1 : 0;
        }
    }
}
