/*
 * tls: the OpenSSL contexts relay uses, built once from the configuration
 * on the main thread (every mistake an operator can fix is reported before
 * a loop starts) and shared read-only by the loops, which only create a
 * connection (SSL) from them.
 *
 *   server side: terminate TLS from clients with a certificate chain and a
 *                key; TLS 1.2 at least, 1.3 whenever the client has it;
 *                optionally ALPN: the first of our protocols the client
 *                offers is chosen, and the loop can pass it on upstream.
 *   client side: originate TLS to the upstream, verifying its certificate
 *                against a CA file (or the system's) and its name or IP.
 */
#ifndef RELAY_TLS_H
#define RELAY_TLS_H

#include <stdbool.h>
#include <stddef.h>

struct ssl_st;
struct ssl_ctx_st;

#define TLS_ALPN_MAX	256	/* wire format: length-prefixed names */

struct tls {
	struct ssl_ctx_st *ctx;
	unsigned char alpn[TLS_ALPN_MAX];	/* server: protocols we accept */
	unsigned alpn_len;
};

/* A server context from the PEM certificate chain in cert and the key in
 * key; alpn is a comma-separated protocol list ("h2,http/1.1") or NULL.
 * Problems that do not stop it working (a key file readable by group or
 * others, an expired certificate) are written to warn, one per line ("" if
 * none). Returns the context, or NULL with err saying which file is wrong
 * and how (unreadable, not PEM, key does not match the certificate). */
struct tls *tls_server_new(const char *cert, const char *key, const char *alpn,
			   char *warn, size_t warnlen, char *err, size_t errlen);

/* A client context that verifies peers against the PEM CA file ca (NULL:
 * the system's trust store). Returns it, or NULL with err filled. */
struct tls *tls_client_new(const char *ca, char *err, size_t errlen);

/* Take another reference to t (NULL: none); returns t. Any thread. */
struct tls *tls_ref(struct tls *t);

/* Drop the caller's reference; t goes with the last connection made from
 * it. */
void tls_free(struct tls *t);

/* A connection that accepts a handshake. NULL when out of memory. */
struct ssl_st *tls_accept(struct tls *t);

/* A connection to host (a name: sent as SNI and verified against the
 * certificate; an IP literal: verified against its IP addresses) offering
 * the ALPN protocol proto[0..len) when len > 0. NULL when out of memory. */
struct ssl_st *tls_connect(struct tls *t, const char *host,
			   const unsigned char *proto, unsigned len);

/* Free a connection that never became a sock. */
void tls_ssl_free(struct ssl_st *ssl);

/* The protocol ALPN chose on ssl (*len 0: none). */
void tls_alpn_chosen(struct ssl_st *ssl, const unsigned char **proto,
		     unsigned *len);

/* The negotiated version ("TLSv1.3"). */
const char *tls_version(struct ssl_st *ssl);

#endif
