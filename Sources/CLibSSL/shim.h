#ifndef CLIBSSL_SHIM_H
#define CLIBSSL_SHIM_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <string.h>

// OpenSSL's function-like macros and cast-built constants, which Swift cannot import, as functions.

static inline long homerpc_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long homerpc_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }

static inline long homerpc_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long homerpc_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline void homerpc_BIO_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }

static inline void homerpc_BIO_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }

static inline uint64_t homerpc_SSL_OP_NO_RENEGOTIATION(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline uint64_t homerpc_SSL_OP_NO_COMPRESSION(void) { return SSL_OP_NO_COMPRESSION; }
static inline uint64_t homerpc_SSL_OP_CIPHER_SERVER_PREFERENCE(void) { return SSL_OP_CIPHER_SERVER_PREFERENCE; }

static inline long homerpc_SSL_MODE_RELEASE_BUFFERS(void) { return SSL_MODE_RELEASE_BUFFERS; }

/// The certificate's subject as RFC 2253 text ("CN=reader,O=Example") in `buffer`; its length, or
/// -1 if it does not fit.
static inline int homerpc_subject_rfc2253(X509 *certificate, char *buffer, int capacity) {
    BIO *memory = BIO_new(BIO_s_mem());
    if (memory == NULL) return -1;
    int length = -1;
    if (X509_NAME_print_ex(memory, X509_get_subject_name(certificate), 0, XN_FLAG_RFC2253) >= 0) {
        char *text = NULL;
        long available = BIO_get_mem_data(memory, &text);
        if (available >= 0 && available < capacity) {
            memcpy(buffer, text, (size_t)available);
            length = (int)available;
        }
    }
    BIO_free(memory);
    return length;
}

#endif
