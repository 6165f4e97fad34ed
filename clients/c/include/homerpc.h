/*
 * homerpc.h: the C client SDK of HomeRPC.
 *
 * A blocking client for services written in C (or anything that links C): one connection to
 * `homed` over TCP or a Unix-domain socket, unary calls and server streams of the protobuf-c
 * messages generated from proto/home/v1 (include the generated `home/v1/NAME.pb-c.h` headers you use). It speaks
 * the protocol of docs/PROTOCOL.md; the methods, roles and HomeKit codes are in docs/API.md.
 *
 * Threads: a client is used by one thread at a time (no locks inside); use one client per thread,
 * or lock around it. Streams: any number may be open on a client at once, beside unary calls; the
 * messages of a stream that arrive while the client waits for something else are kept for it (at
 * most its credit window, HOMERPC_STREAM_WINDOW, so a stream you do not read holds the server back
 * instead of filling memory). Failures: every call fills a homerpc_status. A connection that is gone
 * (closed by the server's idle timeout or keepalive, a drain, the network), or that has used all
 * 2^32 - 1 stream ids, is opened again for the next call once nothing runs on it any more; a call the server turned away unprocessed (GOAWAY
 * before taking it) is sent once more on the new connection. Streams end with their connection.
 */
#ifndef HOMERPC_H
#define HOMERPC_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

#include "home/v1/status.pb-c.h"
#include "homerpc_methods.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes, gRPC's numbers (docs/PROTOCOL.md, "Status codes"). */
enum homerpc_code {
    HOMERPC_OK = 0,
    HOMERPC_CANCELLED = 1,
    HOMERPC_UNKNOWN = 2,
    HOMERPC_INVALID_ARGUMENT = 3,
    HOMERPC_DEADLINE_EXCEEDED = 4,
    HOMERPC_NOT_FOUND = 5,
    HOMERPC_ALREADY_EXISTS = 6,
    HOMERPC_PERMISSION_DENIED = 7,
    HOMERPC_RESOURCE_EXHAUSTED = 8,
    HOMERPC_FAILED_PRECONDITION = 9,
    HOMERPC_ABORTED = 10,
    HOMERPC_OUT_OF_RANGE = 11,
    HOMERPC_UNIMPLEMENTED = 12,
    HOMERPC_INTERNAL = 13,
    HOMERPC_UNAVAILABLE = 14,
    HOMERPC_DATA_LOSS = 15,
    HOMERPC_UNAUTHENTICATED = 16,
};

/* Messages a stream may receive before the client grants more credit; it grants half of this each
 * time the application has taken half. */
#define HOMERPC_STREAM_WINDOW 32

/* How a call ended. Zero-initialise one (`homerpc_status status = {0};`), pass it to calls, and
 * release it with homerpc_status_reset() once done (each call resets it first). */
typedef struct homerpc_status {
    int code;            /* enum homerpc_code; HOMERPC_OK on success */
    int retryable;       /* the server said the call had no effect and may be sent again */
    char message[1025];  /* the server's message (at most 1,024 bytes), or the client's own */
    /* The server's home.v1.ErrorDetails (HomeKit code and name, object id, field, per-item
     * results), or NULL when it sent none. */
    Home__V1__ErrorDetails *details;
} homerpc_status;

/* Frees the status's details and sets it back to OK. */
void homerpc_status_reset(homerpc_status *status);

/* The code's name, e.g. "NOT_FOUND" ("UNKNOWN" for numbers outside the table). */
const char *homerpc_code_name(int code);

/* The HomeKit code of a failure (details->homekit_code), 0 when there is none. */
int32_t homerpc_homekit_code(const homerpc_status *status);

typedef struct homerpc_client homerpc_client;

/*
 * Connects and performs the protocol's handshake, waiting at most 10 s.
 *   endpoint: "HOST:PORT" (an IPv4 or IPv6 address or a name; "[::1]:7420" for IPv6) or "unix:PATH".
 *   token:    the bearer token sent with every call (the owner's is in homed-owner.token beside the
 *             server's store), or NULL to call only what needs none (home.v1.Health/Check).
 * Returns NULL on failure, with the reason in status (UNAVAILABLE when nothing answers).
 */
homerpc_client *homerpc_connect(const char *endpoint, const char *token, homerpc_status *status);

/* TLS settings for homerpc_connect_tls(). Every field may be NULL. */
typedef struct homerpc_tls_options {
    const char *ca_file;     /* PEM CAs the server's certificate must chain to; NULL: the system's */
    const char *cert_file;   /* PEM client certificate chain, for a server requiring mutual TLS */
    const char *key_file;    /* PEM private key of cert_file */
    const char *server_name; /* the name the server's certificate must carry; NULL: the endpoint's host */
} homerpc_tls_options;

/*
 * As homerpc_connect(), over TLS 1.2 or 1.3 (OpenSSL; ALPN "hrpc/1"): the server's certificate is
 * checked against the CAs and the name. A refused handshake fails with UNAVAILABLE, not retryable,
 * and OpenSSL's reason in status->message ("TLS handshake failed: certificate verify failed ...").
 * A reconnect after the connection is lost makes a new TLS session with the same settings.
 */
homerpc_client *homerpc_connect_tls(
    const char *endpoint,
    const char *token,
    const homerpc_tls_options *tls,
    homerpc_status *status
);

/* Cancels the client's open calls, closes the connection and frees the client and its streams'
 * queued messages (streams not yet closed with homerpc_stream_close() must not be used after). */
void homerpc_close(homerpc_client *client);

/* Sends `trace_id` (up to 255 bytes) as the `trace-id` metadata of every later call, so that the
 * server's log line for the call carries it (homed logs every call at --log-level debug); NULL stops
 * sending one. A service typically sets its own request's trace id before the calls it makes for it. */
int homerpc_set_trace_id(homerpc_client *client, const char *trace_id);

/*
 * One unary call, e.g. homerpc_call(client, "home.v1.HomeService/AddRoom", &request.base,
 * &home__v1__add_room_response__descriptor, (ProtobufCMessage **)&response, 5000, NULL, &status).
 *   request:         the request message (any protobuf-c message; NULL sends an empty one).
 *   response_type:   the descriptor of the method's response message.
 *   response:        on success, the decoded response; free it with protobuf_c_message_free_unpacked().
 *   timeout_ms:      the call's deadline (0 for none); the client gives up 1 s after it.
 *   idempotency_key: for a mutation that may be retried (1-128 bytes; docs/API.md, "Retries and
 *                    idempotency keys"), or NULL.
 * Returns status->code: HOMERPC_OK, or the failure (its message and details in status).
 */
int homerpc_call(
    homerpc_client *client, const char *method, const ProtobufCMessage *request,
    const ProtobufCMessageDescriptor *response_type, ProtobufCMessage **response, uint32_t timeout_ms,
    const char *idempotency_key, homerpc_status *status);

/*
 * The connection is read only while the client is inside a call: that is when it answers the
 * server's keepalive PINGs. A client that keeps streams open while it makes no call for longer than
 * the server's keepalive interval plus its timeout (30 s + 10 s by default) should call
 * homerpc_poll() meanwhile (or watch homerpc_fd() for input and call homerpc_poll(client, 0)), or
 * the server closes the connection and the streams end. Unary calls need no polling: the next call
 * connects again (as after the server's idle timeout, 300 s without calls by default).
 */

/* The client's own keepalive, checked while it waits inside a call or homerpc_poll(): after
 * interval_ms without a byte from the server it sends a PING, and if nothing arrives within
 * timeout_ms the connection breaks (the call or stream ends UNAVAILABLE, "keepalive timeout: ..."):
 * a server gone without closing the connection, or a broken network path, cannot hold a stream or a
 * call without deadline for ever. Defaults 30,000 and 10,000 ms; an interval of 0 turns it off. */
void homerpc_set_keepalive(homerpc_client *client, int interval_ms, int timeout_ms);

/* Reads and handles what arrives for at most wait_ms (0: only what is there now): answers PINGs,
 * keeps stream messages for their streams. Returns 0, or -1 once the connection is broken. */
int homerpc_poll(homerpc_client *client, int wait_ms);

/* The connection's socket, to watch for input (POLLIN) in an event loop; never read or write it. */
int homerpc_fd(const homerpc_client *client);

typedef struct homerpc_stream homerpc_stream;

/*
 * Opens a server-streaming call (home.v1.HomeService/Subscribe, BrowseAccessories). Returns the
 * stream, or NULL with the reason in status when the call could not be sent. A refusal by the server
 * (e.g. NOT_FOUND for a home the caller does not see) arrives as the stream's end in
 * homerpc_stream_next().
 */
homerpc_stream *homerpc_stream_open(
    homerpc_client *client, const char *method, const ProtobufCMessage *request,
    const ProtobufCMessageDescriptor *message_type, uint32_t timeout_ms, homerpc_status *status);

enum homerpc_next {
    HOMERPC_NEXT_MESSAGE = 1, /* *message is the next message; free it with protobuf_c_message_free_unpacked() */
    HOMERPC_NEXT_END = 0,     /* the stream ended; status says how (HOMERPC_OK for a normal end) */
    HOMERPC_NEXT_TIMEOUT = 2, /* nothing arrived within wait_ms; the stream is still open */
};

/* Waits at most wait_ms (-1: without limit) for the stream's next message. After HOMERPC_NEXT_END it
 * keeps answering HOMERPC_NEXT_END with the same status. */
enum homerpc_next homerpc_stream_next(
    homerpc_stream *stream, ProtobufCMessage **message, int wait_ms, homerpc_status *status);

/* Cancels the stream if it is still open and frees it with the messages it still holds. */
void homerpc_stream_close(homerpc_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* HOMERPC_H */
