/*
 * homerpc.c: the C client SDK (include/homerpc.h). The framing and the connection and call rules
 * are docs/PROTOCOL.md's; this file is one blocking connection that multiplexes calls by stream id.
 */
#define _GNU_SOURCE
#include "homerpc.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum frame_type {
    FRAME_SETTINGS = 0x01,
    FRAME_CALL_START = 0x02,
    FRAME_MESSAGE = 0x03,
    FRAME_CALL_END = 0x04,
    FRAME_CANCEL = 0x05,
    FRAME_CREDIT = 0x06,
    FRAME_PING = 0x07,
    FRAME_PONG = 0x08,
    FRAME_GOAWAY = 0x09,
};

#define HEADER_SIZE 10
#define FLAG_END_STREAM 0x01
#define FLAG_RETRYABLE 0x01
#define SETTING_MAX_FRAME_SIZE 1
#define SETTING_INITIAL_STREAM_CREDIT 2
/* The largest frame payload this client accepts (what it announces). One answer is one frame and a
 * whole home one answer, about 900 bytes a lamp: the protocol's largest, 16 MiB, takes a home of
 * about 18,000 (its 1 MiB default, about 1,100), past the server's default of 10,000 accessories a
 * home. The input buffer grows only when such a frame comes. */
#define OWN_MAX_FRAME (16u << 20)
#define DEFAULT_PEER_MAX_FRAME (1u << 20)
#define HANDSHAKE_TIMEOUT_MS 10000
/* A unary call waits this long past its deadline for the server's DEADLINE_EXCEEDED. */
#define DEADLINE_GRACE_MS 1000
/* Bytes read ahead while a send waits for room: past this the server is not reading at all. */
#define MAX_READ_AHEAD (16u << 20)
/* How long a send waits while the server takes none of its bytes: then it is not reading, and the
 * connection breaks instead of the caller waiting for ever (a server sending PINGs it never reads
 * the PONGs of would otherwise hold it past every deadline). The fuzzer's peer never reads at all. */
#ifdef HOMERPC_FUZZ
#define SEND_STALL_MS 0
#else
#define SEND_STALL_MS 10000
#endif
/* While the client waits inside a call, a connection that brought no byte for the keepalive interval
 * gets a PING; if still nothing arrives within the keepalive timeout the connection is dead (a server
 * gone without a FIN, a broken path) and breaks, instead of a stream or a call without deadline
 * waiting for ever. The server's own keepalive uses the same defaults (homerpc_set_keepalive). */
#define DEFAULT_KEEPALIVE_INTERVAL_MS 30000
#define DEFAULT_KEEPALIVE_TIMEOUT_MS 10000

static const unsigned char preface[8] = {'H', 'R', 'P', 'C', '\r', '\n', 0x00, 0x01};

/* A call in flight: a unary call while homerpc_call() waits for it, or an open stream. */
struct homerpc_stream {
    homerpc_client *client; /* NULL once the client is closed */
    uint32_t id;
    int is_stream;
    const ProtobufCMessageDescriptor *type;
    ProtobufCMessage **queue; /* messages not yet taken, oldest at `head` */
    size_t head, count, capacity;
    uint32_t taken_since_credit;
    int ended;
    int end_code, end_retryable;
    char end_message[1025];
    uint8_t *end_details; /* the CALL_END's ErrorDetails bytes, decoded afresh for each status */
    size_t end_details_len;
    struct homerpc_stream *next;
};

struct homerpc_client {
    int fd;
    SSL_CTX *tls;    /* set for a TLS client: every connection makes a session from it */
    SSL *session;    /* the connection's TLS session, or NULL (plain, or not connected) */
    char *server_name; /* the name the certificate must carry (the endpoint's host by default) */
    int broken;
    char broken_reason[512];
    char *endpoint;
    char *token;
    char *trace_id;
    uint32_t next_stream_id;
    uint32_t peer_max_frame;
    int going_away;
    uint32_t goaway_last_id;
    char goaway_message[600]; /* why: "server is draining", "idle timeout"... */
    unsigned char *in;
    size_t in_used, in_capacity;
    long long last_read_ms; /* when a byte last arrived */
    long long ping_sent_ms; /* when our unanswered keepalive PING left; 0: none out */
    int keepalive_interval_ms, keepalive_timeout_ms; /* interval 0: no keepalive */
    struct homerpc_stream *calls;
};

/* ---- small helpers ---- */

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Milliseconds until `deadline` for poll(): -1 without one, 0 once passed. */
static int remaining_ms(long long deadline) {
    if (deadline < 0) return -1;
    long long left = deadline - now_ms();
    if (left <= 0) return 0;
    return left > 1000000 ? 1000000 : (int)left;
}

static void put_u16(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void put_u32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static uint32_t get_u16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }

static uint32_t get_u32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void set_status(homerpc_status *status, int code, int retryable, const char *format, ...) {
    if (!status) return;
    status->code = code;
    status->retryable = retryable;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(status->message, sizeof status->message, format, arguments);
    va_end(arguments);
}

void homerpc_status_reset(homerpc_status *status) {
    if (!status) return;
    if (status->details) home__v1__error_details__free_unpacked(status->details, NULL);
    memset(status, 0, sizeof *status);
}

const char *homerpc_code_name(int code) {
    static const char *const names[] = {
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
        "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
        "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    };
    return code >= 0 && code <= 16 ? names[code] : "UNKNOWN";
}

int32_t homerpc_homekit_code(const homerpc_status *status) {
    return status && status->details ? status->details->homekit_code : 0;
}

/* ---- calls ---- */

static void end_call(struct homerpc_stream *call, int code, int retryable, const char *message,
                     const unsigned char *details, size_t details_len) {
    if (call->ended) return;
    call->ended = 1;
    call->end_code = code;
    call->end_retryable = retryable;
    snprintf(call->end_message, sizeof call->end_message, "%s", message);
    if (details_len > 0) {
        call->end_details = malloc(details_len);
        if (call->end_details) {
            memcpy(call->end_details, details, details_len);
            call->end_details_len = details_len;
        }
    }
}

/* The call's end as a status; its details are decoded afresh, so each status owns its own. */
static void copy_end(const struct homerpc_stream *call, homerpc_status *status) {
    if (!status) return;
    homerpc_status_reset(status);
    status->code = call->end_code;
    status->retryable = call->end_retryable;
    snprintf(status->message, sizeof status->message, "%s", call->end_message);
    if (call->end_details_len > 0)
        status->details = home__v1__error_details__unpack(NULL, call->end_details_len, call->end_details);
}

static struct homerpc_stream *find_call(homerpc_client *client, uint32_t id) {
    for (struct homerpc_stream *call = client->calls; call; call = call->next)
        if (call->id == id) return call;
    return NULL;
}

static void unlink_call(homerpc_client *client, struct homerpc_stream *call) {
    for (struct homerpc_stream **link = &client->calls; *link; link = &(*link)->next) {
        if (*link == call) {
            *link = call->next;
            break;
        }
    }
    call->next = NULL;
    call->client = NULL;
}

static void free_call(struct homerpc_stream *call) {
    for (size_t i = 0; i < call->count; i++)
        protobuf_c_message_free_unpacked(call->queue[(call->head + i) % call->capacity], NULL);
    free(call->queue);
    free(call->end_details);
    free(call);
}

static int enqueue(struct homerpc_stream *call, ProtobufCMessage *message) {
    if (call->count == call->capacity) {
        size_t capacity = call->capacity ? call->capacity * 2 : 4;
        ProtobufCMessage **queue = malloc(capacity * sizeof *queue);
        if (!queue) return -1;
        for (size_t i = 0; i < call->count; i++) queue[i] = call->queue[(call->head + i) % call->capacity];
        free(call->queue);
        call->queue = queue;
        call->capacity = capacity;
        call->head = 0;
    }
    call->queue[(call->head + call->count) % call->capacity] = message;
    call->count++;
    return 0;
}

static ProtobufCMessage *dequeue(struct homerpc_stream *call) {
    if (call->count == 0) return NULL;
    ProtobufCMessage *message = call->queue[call->head];
    call->head = (call->head + 1) % call->capacity;
    call->count--;
    return message;
}

/* ---- the connection ---- */

/* Marks the connection unusable and ends every call on it: whether a call in flight took effect
 * is unknown, so none is marked retryable. */
static void break_connection(homerpc_client *client, const char *format, ...) {
    if (client->broken) return;
    client->broken = 1;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(client->broken_reason, sizeof client->broken_reason, format, arguments);
    va_end(arguments);
    for (struct homerpc_stream *call = client->calls; call; call = call->next)
        end_call(call, HOMERPC_UNAVAILABLE, 0, client->broken_reason, NULL, 0);
    if (client->fd >= 0) shutdown(client->fd, SHUT_RDWR);
}

/* OpenSSL's queued reasons for this thread, "reason; reason" in `buffer` (emptying the queue). */
static const char *tls_reasons(char *buffer, size_t size) {
    buffer[0] = '\0';
    unsigned long code;
    while ((code = ERR_get_error()) != 0) {
        const char *reason = ERR_reason_error_string(code);
        size_t used = strlen(buffer);
        snprintf(buffer + used, size - used, "%s%s", used ? "; " : "", reason ? reason : "unknown");
    }
    return buffer[0] ? buffer : "the peer broke off the session";
}

/* read_available() for a TLS session: decrypts every whole record there is; -1 once broken. */
static int read_tls(homerpc_client *client) {
    for (;;) {
        size_t room = client->in_capacity - client->in_used;
        if (room == 0) return 0;
        ERR_clear_error();
        int n = SSL_read(client->session, client->in + client->in_used, room > INT32_MAX ? INT32_MAX : (int)room);
        if (n > 0) {
            client->in_used += (size_t)n;
            client->last_read_ms = now_ms();
            continue;
        }
        int error = SSL_get_error(client->session, n);
        if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) return 0;
        if (error == SSL_ERROR_SYSCALL && (errno == EINTR || errno == EAGAIN)) return 0;
        char reasons[400];
        if (error == SSL_ERROR_ZERO_RETURN)
            break_connection(client, "the server closed the connection");
        else
            break_connection(client, "TLS record failed: %s", tls_reasons(reasons, sizeof reasons));
        return -1;
    }
}

/* send() for a TLS session: bytes taken (a partial write is allowed), or -1 with errno EAGAIN when
 * the session must wait for the socket (either way), or another errno once failed. */
static ssize_t write_tls(homerpc_client *client, const unsigned char *bytes, size_t length) {
    ERR_clear_error();
    int n = SSL_write(client->session, bytes, length > INT32_MAX ? INT32_MAX : (int)length);
    if (n > 0) return n;
    int error = SSL_get_error(client->session, n);
    if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    char reasons[400];
    break_connection(client, "TLS write failed: %s", tls_reasons(reasons, sizeof reasons));
    errno = EPIPE;
    return -1;
}

/* Runs the TLS handshake on the client's connected socket by `deadline`: 0, or -1 with the reason
 * in status (not retryable: the same settings fail the same way). */
static int start_tls(homerpc_client *client, const char *host, long long deadline, homerpc_status *status) {
    client->session = SSL_new(client->tls);
    if (!client->session || SSL_set_fd(client->session, client->fd) != 1) {
        set_status(status, HOMERPC_RESOURCE_EXHAUSTED, 0, "cannot make a TLS session");
        return -1;
    }
    const char *name = client->server_name ? client->server_name : host;
    unsigned char address[16];
    if (inet_pton(AF_INET, name, address) == 1 || inet_pton(AF_INET6, name, address) == 1) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(client->session), name);
    } else {
        SSL_set1_host(client->session, name);
        SSL_set_tlsext_host_name(client->session, name);
    }
    for (;;) {
        ERR_clear_error();
        int result = SSL_connect(client->session);
        if (result == 1) return 0;
        int error = SSL_get_error(client->session, result);
        short events = error == SSL_ERROR_WANT_READ ? POLLIN : error == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (!events) {
            char reasons[400];
            tls_reasons(reasons, sizeof reasons);
            long verdict = SSL_get_verify_result(client->session);
            set_status(status, HOMERPC_UNAVAILABLE, 0, "TLS handshake failed: %s%s%s", reasons,
                       verdict != X509_V_OK ? ": " : "", verdict != X509_V_OK ? X509_verify_cert_error_string(verdict) : "");
            return -1;
        }
        struct pollfd p = {.fd = client->fd, .events = events};
        if (poll(&p, 1, remaining_ms(deadline)) <= 0) {
            set_status(status, HOMERPC_UNAVAILABLE, 0, "%s did not finish the TLS handshake", client->endpoint);
            return -1;
        }
    }
}

/* Ends the connection's TLS session, if any, and closes its socket. */
static void close_socket(homerpc_client *client) {
    if (client->session) {
        if (!client->broken) SSL_shutdown(client->session); /* close_notify, best effort */
        SSL_free(client->session);
        client->session = NULL;
    }
    if (client->fd >= 0) close(client->fd);
    client->fd = -1;
}

/* Reads what is there into the input buffer; -1 once the connection is broken. */
static int read_available(homerpc_client *client) {
    if (client->in_capacity - client->in_used < 65536) {
        size_t capacity = client->in_capacity ? client->in_capacity * 2 : 131072;
        if (capacity > MAX_READ_AHEAD + HEADER_SIZE + OWN_MAX_FRAME) {
            break_connection(client, "the server sent more than the client can hold");
            return -1;
        }
        unsigned char *in = realloc(client->in, capacity);
        if (!in) {
            break_connection(client, "out of memory");
            return -1;
        }
        client->in = in;
        client->in_capacity = capacity;
    }
    if (client->session) return read_tls(client);
    ssize_t n = recv(client->fd, client->in + client->in_used, client->in_capacity - client->in_used, 0);
    if (n > 0) {
        client->in_used += (size_t)n;
        client->last_read_ms = now_ms();
        return 0;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    break_connection(client, n == 0 ? "the server closed the connection" : "read failed: %s", strerror(errno));
    return -1;
}

/* Writes all of `bytes`, reading ahead meanwhile so that a server waiting for us to read cannot
 * deadlock the write. */
static int send_all(homerpc_client *client, const unsigned char *bytes, size_t length) {
    long long stalled_until = -1;
    while (length > 0 && !client->broken) {
        ssize_t n = client->session ? write_tls(client, bytes, length)
                                    : send(client->fd, bytes, length, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            bytes += n;
            length -= (size_t)n;
            stalled_until = -1;
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EINTR) {
            break_connection(client, "write failed: %s", strerror(errno));
            break;
        }
        if (stalled_until < 0) stalled_until = now_ms() + SEND_STALL_MS;
        long long left = stalled_until - now_ms();
        if (left <= 0) {
            break_connection(client, "the server read nothing for %d ms", SEND_STALL_MS);
            break;
        }
        struct pollfd p = {.fd = client->fd, .events = POLLOUT | POLLIN};
        if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
            break_connection(client, "poll failed: %s", strerror(errno));
            break;
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) read_available(client);
    }
    return client->broken ? -1 : 0;
}

static int send_frame(homerpc_client *client, enum frame_type type, unsigned flags, uint32_t stream,
                      const unsigned char *payload, size_t length) {
    unsigned char header[HEADER_SIZE];
    put_u32(header, (uint32_t)length);
    header[4] = (unsigned char)type;
    header[5] = (unsigned char)flags;
    put_u32(header + 6, stream);
    if (send_all(client, header, sizeof header) < 0) return -1;
    return length ? send_all(client, payload, length) : 0;
}

static void handle_goaway(homerpc_client *client, const unsigned char *p, uint32_t length) {
    if (length < 6) {
        break_connection(client, "protocol error: short GOAWAY");
        return;
    }
    client->going_away = 1;
    client->goaway_last_id = get_u32(p);
    uint32_t code = get_u16(p + 4);
    char *message = client->goaway_message;
    snprintf(message, sizeof client->goaway_message, "the server is closing the connection (%.*s): connect again",
             (int)(length - 6 > 512 ? 512 : length - 6), (const char *)p + 6);
    /* Calls above the last stream id were not processed: they may be sent again. */
    for (struct homerpc_stream *call = client->calls; call; call = call->next)
        if (call->id > client->goaway_last_id) end_call(call, HOMERPC_UNAVAILABLE, 1, message, NULL, 0);
    if (code != HOMERPC_OK) break_connection(client, "%s (%s)", message, homerpc_code_name((int)code));
}

static void handle_message(homerpc_client *client, struct homerpc_stream *call, const unsigned char *p,
                           uint32_t length) {
    if (!call || call->ended) return;
    if (!call->is_stream && call->count > 0) {
        end_call(call, HOMERPC_INTERNAL, 0, "more than one response: a streaming method is called with homerpc_stream_open()",
                 NULL, 0);
        send_frame(client, FRAME_CANCEL, 0, call->id, NULL, 0);
        return;
    }
    /* The server sends a stream's messages only against the credit the client granted. */
    if (call->count >= HOMERPC_STREAM_WINDOW) {
        break_connection(client, "protocol error: more messages on stream %u than its credit", call->id);
        return;
    }
    ProtobufCMessage *message = protobuf_c_message_unpack(call->type, NULL, length, p);
    if (!message) {
        end_call(call, HOMERPC_INTERNAL, 0, "the server's message does not decode as the expected type", NULL, 0);
        send_frame(client, FRAME_CANCEL, 0, call->id, NULL, 0);
        return;
    }
    if (enqueue(call, message) < 0) {
        protobuf_c_message_free_unpacked(message, NULL);
        break_connection(client, "out of memory");
    }
}

static void handle_call_end(homerpc_client *client, struct homerpc_stream *call, unsigned flags,
                            const unsigned char *p, uint32_t length) {
    if (length < 4 || 4 + get_u16(p + 2) > length) {
        break_connection(client, "protocol error: malformed CALL_END");
        return;
    }
    if (!call) return;
    uint32_t message_length = get_u16(p + 2);
    char message[1025];
    size_t shown = message_length < sizeof message - 1 ? message_length : sizeof message - 1;
    memcpy(message, p + 4, shown);
    message[shown] = '\0';
    end_call(call, (int)get_u16(p), flags & FLAG_RETRYABLE, message, p + 4 + message_length,
             length - 4 - message_length);
}

/* Handles every complete frame in the input buffer. */
static void process_frames(homerpc_client *client) {
    size_t offset = 0;
    while (!client->broken && client->in_used - offset >= HEADER_SIZE) {
        const unsigned char *header = client->in + offset;
        uint32_t length = get_u32(header);
        unsigned type = header[4], flags = header[5];
        uint32_t stream = get_u32(header + 6);
        if (length > OWN_MAX_FRAME) {
            break_connection(client, "protocol error: frame of %u bytes, over the limit", length);
            break;
        }
        if (client->in_used - offset - HEADER_SIZE < length) break;
        const unsigned char *payload = header + HEADER_SIZE;
        int connection_frame = type == FRAME_SETTINGS || type == FRAME_PING || type == FRAME_PONG || type == FRAME_GOAWAY;
        if (connection_frame != (stream == 0)) {
            break_connection(client, "protocol error: frame type %u on stream %u", type, stream);
            break;
        }
        switch (type) {
        case FRAME_SETTINGS:
            if (length % 6) {
                break_connection(client, "protocol error: SETTINGS of %u bytes", length);
                break;
            }
            for (uint32_t i = 0; i < length; i += 6)
                if (get_u16(payload + i) == SETTING_MAX_FRAME_SIZE) client->peer_max_frame = get_u32(payload + i + 2);
            break;
        case FRAME_PING:
            if (length != 8) {
                break_connection(client, "protocol error: PING of %u bytes", length);
                break;
            }
            {
                /* Copied: a send that waits reads ahead into the buffer `payload` points into. */
                unsigned char ping[8];
                memcpy(ping, payload, sizeof ping);
                send_frame(client, FRAME_PONG, 0, 0, ping, sizeof ping);
            }
            break;
        case FRAME_PONG:
            break;
        case FRAME_GOAWAY:
            handle_goaway(client, payload, length);
            break;
        case FRAME_MESSAGE:
            handle_message(client, find_call(client, stream), payload, length);
            break;
        case FRAME_CALL_END:
            handle_call_end(client, find_call(client, stream), flags, payload, length);
            break;
        default:
            break_connection(client, "protocol error: frame type %u from the server", type);
            break;
        }
        offset += HEADER_SIZE + length;
    }
    if (client->broken) {
        client->in_used = 0;
        return;
    }
    memmove(client->in, client->in + offset, client->in_used - offset);
    client->in_used -= offset;
}

/* The keepalive's part of a wait: sends the PING that is due, breaks a connection whose PING went
 * unanswered, and returns when it next needs to look (a deadline for poll(); -1 when the keepalive
 * is off, or the connection just broke). */
static long long keep_alive(homerpc_client *client) {
    long long now = now_ms();
    int interval = client->keepalive_interval_ms, timeout = client->keepalive_timeout_ms;
    if (interval <= 0) return -1;
    if (client->ping_sent_ms && client->last_read_ms >= client->ping_sent_ms) client->ping_sent_ms = 0;
    if (client->ping_sent_ms) {
        if (now - client->ping_sent_ms < timeout) return client->ping_sent_ms + timeout;
        break_connection(client, "keepalive timeout: nothing from the server for %d ms after a PING", timeout);
        return -1;
    }
    if (now - client->last_read_ms < interval) return client->last_read_ms + interval;
    static const unsigned char ping[8] = {'k', 'e', 'e', 'p', 'a', 'l', 'i', 'v'};
    client->ping_sent_ms = now;
    send_frame(client, FRAME_PING, 0, 0, ping, sizeof ping);
    return now + timeout;
}

/* Waits until `done(call)` holds, the connection breaks, or `deadline` (-1: none) passes; returns 0
 * when done, -1 on timeout. */
static int wait_until(homerpc_client *client, struct homerpc_stream *call,
                      int (*done)(const struct homerpc_stream *), long long deadline) {
    for (;;) {
        if (done(call) || client->broken) return 0;
        long long look_again = keep_alive(client);
        if (client->broken) return 0;
        int deadline_first = deadline >= 0 && (look_again < 0 || deadline < look_again);
        struct pollfd p = {.fd = client->fd, .events = POLLIN};
        int ready = poll(&p, 1, remaining_ms(deadline_first ? deadline : look_again));
        if (ready < 0 && errno != EINTR) {
            break_connection(client, "poll failed: %s", strerror(errno));
            return 0;
        }
        if (ready == 0 && deadline >= 0 && now_ms() >= deadline) return -1;
        if (ready > 0 && read_available(client) == 0) process_frames(client);
    }
}

static int has_ended(const struct homerpc_stream *call) { return call->ended; }

static int has_message_or_ended(const struct homerpc_stream *call) { return call->count > 0 || call->ended; }

static int never(const struct homerpc_stream *call) {
    (void)call;
    return 0;
}

int homerpc_poll(homerpc_client *client, int wait_ms) {
    if (client->broken) return -1;
    wait_until(client, NULL, never, now_ms() + (wait_ms > 0 ? wait_ms : 0));
    return client->broken ? -1 : 0;
}

int homerpc_fd(const homerpc_client *client) { return client->fd; }

/* ---- connecting ---- */

static int open_socket(const char *endpoint, homerpc_status *status) {
    if (strncmp(endpoint, "unix:", 5) == 0) {
        struct sockaddr_un address = {.sun_family = AF_UNIX};
        if (strlen(endpoint + 5) >= sizeof address.sun_path) {
            set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "socket path too long: %s", endpoint + 5);
            return -1;
        }
        strcpy(address.sun_path, endpoint + 5);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) == 0) return fd;
        set_status(status, HOMERPC_UNAVAILABLE, 0, "cannot connect to %s: %s", endpoint, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    char host[256];
    const char *colon = strrchr(endpoint, ':');
    size_t host_length = colon ? (size_t)(colon - endpoint) : 0;
    if (!colon || host_length == 0 || host_length >= sizeof host || colon[1] == '\0') {
        set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "endpoint \"%s\" is not HOST:PORT or unix:PATH", endpoint);
        return -1;
    }
    memcpy(host, endpoint, host_length);
    host[host_length] = '\0';
    if (host[0] == '[' && host[host_length - 1] == ']') {
        memmove(host, host + 1, host_length - 2);
        host[host_length - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *addresses;
    int error = getaddrinfo(host, colon + 1, &hints, &addresses);
    if (error) {
        set_status(status, HOMERPC_UNAVAILABLE, 0, "cannot resolve %s: %s", endpoint, gai_strerror(error));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = addresses; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
        if (errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int soerror = 0;
            socklen_t size = sizeof soerror;
            if (poll(&p, 1, HANDSHAKE_TIMEOUT_MS) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerror, &size) == 0 &&
                soerror == 0)
                break;
            errno = soerror ? soerror : ETIMEDOUT;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(addresses);
    if (fd < 0) {
        set_status(status, HOMERPC_UNAVAILABLE, 0, "cannot connect to %s: %s", endpoint, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Whether the input buffer starts with a whole frame (one over the limit counts: it gets refused). */
static int has_whole_frame(const homerpc_client *client) {
    if (client->in_used < HEADER_SIZE) return 0;
    uint32_t length = get_u32(client->in);
    return length > OWN_MAX_FRAME || client->in_used - HEADER_SIZE >= length;
}

/* Opens the client's connection to its endpoint and performs the handshake: 0, or -1 with the
 * reason in status. On failure the client holds no socket. */
static int open_connection(homerpc_client *client, homerpc_status *status) {
    const char *endpoint = client->endpoint;
    client->fd = open_socket(endpoint, status);
    if (client->fd < 0) return -1;
    if (client->tls) {
        char host[256];
        const char *colon = strrchr(endpoint, ':');
        size_t length = colon ? (size_t)(colon - endpoint) : 0;
        if (length >= sizeof host) length = sizeof host - 1;
        memcpy(host, endpoint + (endpoint[0] == '['), length - (endpoint[0] == '[' ? 2 : 0));
        host[length - (endpoint[0] == '[' ? 2 : 0)] = '\0';
        if (start_tls(client, host, now_ms() + HANDSHAKE_TIMEOUT_MS, status) < 0) {
            close_socket(client);
            return -1;
        }
    }
    client->last_read_ms = now_ms();
    client->ping_sent_ms = 0;
    /* Our preface and SETTINGS at once (PROTOCOL.md, "Preface"). */
    unsigned char hello[sizeof preface + HEADER_SIZE + 12];
    memcpy(hello, preface, sizeof preface);
    unsigned char *settings = hello + sizeof preface;
    put_u32(settings, 12);
    settings[4] = FRAME_SETTINGS;
    settings[5] = 0;
    put_u32(settings + 6, 0);
    put_u16(settings + 10, SETTING_MAX_FRAME_SIZE);
    put_u32(settings + 12, OWN_MAX_FRAME);
    put_u16(settings + 16, SETTING_INITIAL_STREAM_CREDIT);
    put_u32(settings + 18, HOMERPC_STREAM_WINDOW);
    long long deadline = now_ms() + HANDSHAKE_TIMEOUT_MS;
    if (send_all(client, hello, sizeof hello) < 0) goto broken;
    /* The server's preface, then its SETTINGS (or a GOAWAY saying why not). */
    int preface_seen = 0;
    while (!client->broken && !client->going_away) {
        if (!preface_seen && client->in_used >= sizeof preface) {
            if (memcmp(client->in, preface, 6) != 0) {
                set_status(status, HOMERPC_UNAVAILABLE, 0, "%s does not speak the HomeRPC protocol", endpoint);
                goto failed;
            }
            memmove(client->in, client->in + sizeof preface, client->in_used - sizeof preface);
            client->in_used -= sizeof preface;
            preface_seen = 1;
            continue;
        }
        if (preface_seen && has_whole_frame(client)) {
            if (client->in[4] == FRAME_SETTINGS) break;
            process_frames(client); /* a GOAWAY: too many connections, or another version */
            continue;
        }
        struct pollfd p = {.fd = client->fd, .events = POLLIN};
        if (poll(&p, 1, remaining_ms(deadline)) <= 0) {
            set_status(status, HOMERPC_UNAVAILABLE, 0, "%s did not answer the handshake", endpoint);
            goto failed;
        }
        read_available(client);
    }
    if (client->going_away) {
        set_status(status, HOMERPC_UNAVAILABLE, 1, "%s refused the connection: %s", endpoint, client->goaway_message);
        goto failed;
    }
    if (client->broken) goto broken;
    process_frames(client);
    if (!client->broken) return 0;
broken:
    set_status(status, HOMERPC_UNAVAILABLE, 0, "%s", client->broken_reason);
failed:
    close_socket(client);
    return -1;
}

homerpc_client *homerpc_connect(const char *endpoint, const char *token, homerpc_status *status) {
    return homerpc_connect_tls(endpoint, token, NULL, status);
}

/* A client context for `tls`: the trusted CAs, the client certificate, ALPN hrpc/1; NULL with the
 * reason in status. */
static SSL_CTX *make_tls_context(const homerpc_tls_options *tls, homerpc_status *status) {
    static const unsigned char alpn[] = {6, 'h', 'r', 'p', 'c', '/', '1'};
    char reasons[400];
    ERR_clear_error();
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (!context) {
        set_status(status, HOMERPC_RESOURCE_EXHAUSTED, 0, "cannot make a TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(context, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const char *problem = NULL;
    if (tls->ca_file ? SSL_CTX_load_verify_locations(context, tls->ca_file, NULL) != 1
                     : SSL_CTX_set_default_verify_paths(context) != 1)
        problem = "cannot load the trusted CAs";
    else if ((tls->cert_file == NULL) != (tls->key_file == NULL))
        problem = "a client certificate needs both cert_file and key_file";
    else if (tls->cert_file && (SSL_CTX_use_certificate_chain_file(context, tls->cert_file) != 1 ||
                                SSL_CTX_use_PrivateKey_file(context, tls->key_file, SSL_FILETYPE_PEM) != 1 ||
                                SSL_CTX_check_private_key(context) != 1))
        problem = "cannot load the client certificate and key";
    else if (SSL_CTX_set_alpn_protos(context, alpn, sizeof alpn) != 0)
        problem = "cannot set ALPN";
    if (problem) {
        set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "%s: %s", problem, tls_reasons(reasons, sizeof reasons));
        SSL_CTX_free(context);
        return NULL;
    }
    return context;
}

homerpc_client *homerpc_connect_tls(
    const char *endpoint,
    const char *token,
    const homerpc_tls_options *tls,
    homerpc_status *status
) {
    homerpc_status_reset(status);
    homerpc_client *client = calloc(1, sizeof *client);
    if (client) client->fd = -1;
    if (!client || !(client->endpoint = strdup(endpoint)) || (token && !(client->token = strdup(token))) ||
        (tls && tls->server_name && !(client->server_name = strdup(tls->server_name)))) {
        set_status(status, HOMERPC_RESOURCE_EXHAUSTED, 0, "out of memory");
        homerpc_close(client);
        return NULL;
    }
    if (tls && !(client->tls = make_tls_context(tls, status))) {
        homerpc_close(client);
        return NULL;
    }
    client->next_stream_id = 1;
    client->peer_max_frame = DEFAULT_PEER_MAX_FRAME;
    client->keepalive_interval_ms = DEFAULT_KEEPALIVE_INTERVAL_MS;
    client->keepalive_timeout_ms = DEFAULT_KEEPALIVE_TIMEOUT_MS;
    if (open_connection(client, status) == 0) return client;
    homerpc_close(client);
    return NULL;
}

/*
 * A client whose connection is gone (broken, or told to go away) connects again before a new call,
 * as long as no call is still running on the old one (a drain lets calls finish): the calls that
 * ended there stay readable by their owners but leave the client, so stream ids start over.
 * Returns 0 when the client can send, or -1 with the reason in status (retryable: nothing was sent).
 */
static int reconnect_if_gone(homerpc_client *client, homerpc_status *status) {
    if (!client->broken && !client->going_away) return 0;
    homerpc_status ignored = {0};
    if (!status) status = &ignored;
    for (struct homerpc_stream *call = client->calls; call; call = call->next) {
        if (!call->ended) {
            set_status(status, HOMERPC_UNAVAILABLE, 1, "%s",
                       client->going_away ? client->goaway_message : client->broken_reason);
            return -1;
        }
    }
    while (client->calls) unlink_call(client, client->calls);
    close_socket(client);
    client->broken = client->going_away = 0;
    client->in_used = 0;
    client->next_stream_id = 1;
    client->peer_max_frame = DEFAULT_PEER_MAX_FRAME;
    if (open_connection(client, status) == 0) return 0;
    status->retryable = 1;
    if (client->fd < 0) client->broken = 1; /* still gone: the next call tries again */
    snprintf(client->broken_reason, sizeof client->broken_reason, "%.500s", status->message);
    return -1;
}

void homerpc_close(homerpc_client *client) {
    if (!client) return;
    while (client->calls) {
        struct homerpc_stream *call = client->calls;
        unlink_call(client, call);
        if (!call->is_stream) free_call(call);
        /* A stream stays with its owner, who frees it with homerpc_stream_close(). */
        else if (!call->ended) end_call(call, HOMERPC_CANCELLED, 0, "the client was closed", NULL, 0);
    }
    close_socket(client);
    SSL_CTX_free(client->tls);
    free(client->server_name);
    free(client->in);
    free(client->endpoint);
    free(client->token);
    free(client->trace_id);
    free(client);
}

void homerpc_set_keepalive(homerpc_client *client, int interval_ms, int timeout_ms) {
    client->keepalive_interval_ms = interval_ms > 0 ? interval_ms : 0;
    client->keepalive_timeout_ms = timeout_ms > 0 ? timeout_ms : DEFAULT_KEEPALIVE_TIMEOUT_MS;
}

int homerpc_set_trace_id(homerpc_client *client, const char *trace_id) {
    if (trace_id && strlen(trace_id) > 255) return -1;
    char *copy = NULL;
    if (trace_id && !(copy = strdup(trace_id))) return -1;
    free(client->trace_id);
    client->trace_id = copy;
    return 0;
}

/* ---- starting a call ---- */

static struct homerpc_stream *start_call(homerpc_client *client, const char *method, const ProtobufCMessage *request,
                                         const ProtobufCMessageDescriptor *type, uint32_t timeout_ms,
                                         const char *idempotency_key, int is_stream, homerpc_status *status) {
    homerpc_status_reset(status);
    if (!client || !method || !type) {
        set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "a client, a method and a response type are required");
        return NULL;
    }
    if (client->next_stream_id == 0 && !client->broken && !client->going_away) {
        /* The last stream id (2^32 - 1) is used and ids never repeat on a connection: leave it as
         * after a GOAWAY, connecting again once its open calls have ended. */
        client->going_away = 1;
        snprintf(client->goaway_message, sizeof client->goaway_message,
                 "the connection has used every stream id: connect again once its calls end");
    }
    if (reconnect_if_gone(client, status) < 0) return NULL;
    size_t method_length = strlen(method);
    size_t token_length = client->token ? strlen(client->token) + 7 : 0;
    size_t key_length = idempotency_key ? strlen(idempotency_key) : 0;
    if (idempotency_key && (key_length < 1 || key_length > 128)) {
        set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "an idempotency key is 1 to 128 bytes");
        return NULL;
    }
    if (method_length > 65535 || token_length > 65535) {
        set_status(status, HOMERPC_INVALID_ARGUMENT, 0, "method name or token too long");
        return NULL;
    }
    size_t request_length = request ? protobuf_c_message_get_packed_size(request) : 0;
    size_t trace_length = client->trace_id ? strlen(client->trace_id) : 0;
    size_t start_length = 2 + method_length + 4 + 2 + (client->token ? 1 + 13 + 2 + token_length : 0) +
                          (idempotency_key ? 1 + 15 + 2 + key_length : 0) + (client->trace_id ? 1 + 8 + 2 + trace_length : 0);
    if (request_length > client->peer_max_frame || start_length > client->peer_max_frame) {
        set_status(status, HOMERPC_RESOURCE_EXHAUSTED, 0, "the request is larger than the server's frame limit");
        return NULL;
    }
    size_t total = HEADER_SIZE + start_length + HEADER_SIZE + request_length;
    unsigned char *frames = malloc(total);
    struct homerpc_stream *call = calloc(1, sizeof *call);
    if (!frames || !call) {
        free(frames);
        free(call);
        set_status(status, HOMERPC_RESOURCE_EXHAUSTED, 0, "out of memory");
        return NULL;
    }
    call->client = client;
    call->id = client->next_stream_id++;
    call->is_stream = is_stream;
    call->type = type;
    /* CALL_START: method, timeout, metadata. */
    unsigned char *p = frames;
    put_u32(p, (uint32_t)start_length);
    p[4] = FRAME_CALL_START;
    p[5] = 0;
    put_u32(p + 6, call->id);
    p += HEADER_SIZE;
    put_u16(p, (uint32_t)method_length);
    memcpy(p + 2, method, method_length);
    p += 2 + method_length;
    put_u32(p, timeout_ms);
    put_u16(p + 4, (client->token ? 1u : 0u) + (idempotency_key ? 1u : 0u) + (client->trace_id ? 1u : 0u));
    p += 6;
    if (client->trace_id) {
        *p++ = 8;
        memcpy(p, "trace-id", 8);
        put_u16(p + 8, (uint32_t)trace_length);
        memcpy(p + 10, client->trace_id, trace_length);
        p += 10 + trace_length;
    }
    if (client->token) {
        *p++ = 13;
        memcpy(p, "authorization", 13);
        put_u16(p + 13, (uint32_t)token_length);
        memcpy(p + 15, "Bearer ", 7);
        memcpy(p + 22, client->token, token_length - 7);
        p += 15 + token_length;
    }
    if (idempotency_key) {
        *p++ = 15;
        memcpy(p, "idempotency-key", 15);
        put_u16(p + 15, (uint32_t)key_length);
        memcpy(p + 17, idempotency_key, key_length);
        p += 17 + key_length;
    }
    /* The request: one MESSAGE with END_STREAM. */
    put_u32(p, (uint32_t)request_length);
    p[4] = FRAME_MESSAGE;
    p[5] = FLAG_END_STREAM;
    put_u32(p + 6, call->id);
    if (request) protobuf_c_message_pack(request, p + HEADER_SIZE);
    call->next = client->calls;
    client->calls = call;
    int sent = send_all(client, frames, total);
    free(frames);
    if (sent < 0) {
        set_status(status, HOMERPC_UNAVAILABLE, 0, "%s", client->broken_reason);
        unlink_call(client, call);
        free_call(call);
        return NULL;
    }
    return call;
}

int homerpc_call(homerpc_client *client, const char *method, const ProtobufCMessage *request,
                 const ProtobufCMessageDescriptor *response_type, ProtobufCMessage **response, uint32_t timeout_ms,
                 const char *idempotency_key, homerpc_status *status) {
    if (response) *response = NULL;
    homerpc_status scratch = {0};
    homerpc_status *out = status ? status : &scratch;
    struct homerpc_stream *call;
    for (int attempt = 0;; attempt++) {
        call = start_call(client, method, request, response_type, timeout_ms, idempotency_key, 0, out);
        if (!call) {
            int code = out->code;
            homerpc_status_reset(&scratch);
            return code;
        }
        long long deadline = timeout_ms ? now_ms() + timeout_ms + DEADLINE_GRACE_MS : -1;
        if (wait_until(client, call, has_ended, deadline) < 0) {
            send_frame(client, FRAME_CANCEL, 0, call->id, NULL, 0);
            end_call(call, HOMERPC_DEADLINE_EXCEEDED, 0, "no answer within the call's deadline", NULL, 0);
        }
        /* The server went away before taking the call (its idle timeout, a drain): the call had no
         * effect, so it goes once more, on a new connection. */
        int untaken = call->end_code == HOMERPC_UNAVAILABLE && call->end_retryable && client->going_away;
        if (attempt > 0 || !untaken) break;
        unlink_call(client, call);
        free_call(call);
    }
    ProtobufCMessage *message = dequeue(call);
    if (call->end_code == HOMERPC_OK && !message) {
        call->end_code = HOMERPC_INTERNAL;
        snprintf(call->end_message, sizeof call->end_message, "the server ended the call without a response");
    }
    copy_end(call, out);
    int code = out->code;
    if (code == HOMERPC_OK && response) {
        *response = message;
        message = NULL;
    }
    if (message) protobuf_c_message_free_unpacked(message, NULL);
    homerpc_status_reset(&scratch);
    unlink_call(client, call);
    free_call(call);
    return code;
}

homerpc_stream *homerpc_stream_open(homerpc_client *client, const char *method, const ProtobufCMessage *request,
                                    const ProtobufCMessageDescriptor *message_type, uint32_t timeout_ms,
                                    homerpc_status *status) {
    return start_call(client, method, request, message_type, timeout_ms, NULL, 1, status);
}

enum homerpc_next homerpc_stream_next(homerpc_stream *stream, ProtobufCMessage **message, int wait_ms,
                                      homerpc_status *status) {
    *message = NULL;
    homerpc_client *client = stream->client;
    if (client && stream->count == 0 && !stream->ended) {
        if (wait_until(client, stream, has_message_or_ended, wait_ms < 0 ? -1 : now_ms() + wait_ms) < 0)
            return HOMERPC_NEXT_TIMEOUT;
    }
    if (stream->count > 0) {
        *message = dequeue(stream);
        /* Grant credit as the application takes messages: half the window at a time. */
        if (++stream->taken_since_credit >= HOMERPC_STREAM_WINDOW / 2 && !stream->ended && client && !client->broken) {
            unsigned char increment[4];
            put_u32(increment, stream->taken_since_credit);
            send_frame(client, FRAME_CREDIT, 0, stream->id, increment, sizeof increment);
            stream->taken_since_credit = 0;
        }
        return HOMERPC_NEXT_MESSAGE;
    }
    /* Here the stream has ended: waiting returns only with a message or the end, and a stream
     * leaves its client (homerpc_close, a reconnect) only ended. */
    copy_end(stream, status);
    return HOMERPC_NEXT_END;
}

void homerpc_stream_close(homerpc_stream *stream) {
    if (!stream) return;
    homerpc_client *client = stream->client;
    if (client) {
        if (!stream->ended && !client->broken) send_frame(client, FRAME_CANCEL, 0, stream->id, NULL, 0);
        unlink_call(client, stream);
    }
    free_call(stream);
}

#ifdef HOMERPC_TESTING
/* For tests/sdk_test.c (built with -DHOMERPC_TESTING): start near the end of the stream id space. */
void homerpc_testing_set_next_stream_id(homerpc_client *client, uint32_t id);
void homerpc_testing_set_next_stream_id(homerpc_client *client, uint32_t id) { client->next_stream_id = id; }
#endif

#ifdef HOMERPC_FUZZ
/*
 * The fuzzer's way in (fuzz/fuzz_frames.c, built only with -DHOMERPC_FUZZ): `data` as what a server
 * sent after the handshake, to a client with a unary call on stream 1 and a stream on stream 2 in
 * flight. Its answers (PONG, CANCEL, CREDIT) go to `peer`, one end of a socket pair, which the client
 * closes.
 */
void homerpc_fuzz_frames(const uint8_t *data, size_t size, int peer);
void homerpc_fuzz_frames(const uint8_t *data, size_t size, int peer) {
    homerpc_client *client = calloc(1, sizeof *client);
    struct homerpc_stream *unary = calloc(1, sizeof *unary), *stream = calloc(1, sizeof *stream);
    if (!client || !unary || !stream) abort();
    client->fd = peer;
    client->next_stream_id = 3;
    client->peer_max_frame = DEFAULT_PEER_MAX_FRAME;
    *unary = (struct homerpc_stream){.client = client, .id = 1, .type = &home__v1__error_details__descriptor};
    *stream = (struct homerpc_stream){.client = client, .id = 2, .is_stream = 1, .type = &home__v1__error_details__descriptor};
    unary->next = stream;
    client->calls = unary;
    client->in = malloc(size ? size : 1);
    if (!client->in) abort();
    memcpy(client->in, data, size);
    client->in_used = client->in_capacity = size;
    process_frames(client);
    /* Take what the stream got, as an application would, then its end. */
    homerpc_status status = {0};
    ProtobufCMessage *message;
    while (!client->broken && stream->count > 0) {
        homerpc_stream_next(stream, &message, 0, &status);
        protobuf_c_message_free_unpacked(message, NULL);
    }
    if (stream->ended) copy_end(stream, &status);
    if (unary->ended) copy_end(unary, &status);
    homerpc_status_reset(&status);
    homerpc_stream_close(stream);
    homerpc_close(client);
}
#endif
