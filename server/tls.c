/*
 * tls: contexts. Both sides run non-blocking in the loops, so the options
 * chosen here are those a relay needs there: partial writes and moving
 * write buffers (the loop's buffers are compacted between retries),
 * released buffers (idle connections cost little), no renegotiation (a
 * client could make the loop do expensive work on demand), and a peer that
 * closes without close_notify reads as end of stream, as it does over TCP.
 */
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The reason of the oldest queued OpenSSL error, and clear the queue. */
static const char *ssl_reason(void)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	ERR_clear_error();
	return r ? r : "unknown error";
}

/* A struct tls lives as long as its context, which every connection made
 * from it holds a reference to: a reload drops the old context while
 * handshakes begun on it (and its ALPN callback) go on. */
static int tls_index = -1;

static void tls_ex_free(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx,
			long argl, void *argp)
{
	(void)parent;
	(void)ad;
	(void)idx;
	(void)argl;
	(void)argp;
	free(ptr);
}

/* Contexts are made at start-up and by reloads, one at a time, so the
 * index needs no lock. */
static struct tls *tls_new(bool server, char *err, size_t errlen)
{
	if (tls_index < 0)
		tls_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL,
						     tls_ex_free);
	struct tls *t = calloc(1, sizeof(*t));
	if (t)
		t->ctx = SSL_CTX_new(server ? TLS_server_method() :
				     TLS_client_method());
	if (!t || !t->ctx || tls_index < 0 ||
	    !SSL_CTX_set_ex_data(t->ctx, tls_index, t)) {
		if (t)
			SSL_CTX_free(t->ctx);
		free(t);
		snprintf(err, errlen, "TLS: cannot create a context: %s",
			 ssl_reason());
		return NULL;
	}
	/* 1.2 at least; the highest both sides have (1.3) is negotiated. */
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(t->ctx, SSL_OP_NO_RENEGOTIATION |
			    SSL_OP_IGNORE_UNEXPECTED_EOF |
			    SSL_OP_CIPHER_SERVER_PREFERENCE);
	/* Read whole socket buffers, not record by record: fewer system
	 * calls, and a short read tells the loop the socket is empty. */
	SSL_CTX_set_read_ahead(t->ctx, 1);
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
			 SSL_MODE_RELEASE_BUFFERS);
	return t;
}

struct tls *tls_ref(struct tls *t)
{
	if (t)
		SSL_CTX_up_ref(t->ctx);
	return t;
}

void tls_free(struct tls *t)
{
	if (t)
		SSL_CTX_free(t->ctx);
}

/* "h2,http/1.1" into the length-prefixed wire format. */
static int alpn_parse(struct tls *t, const char *list, char *err, size_t errlen)
{
	unsigned n = 0;
	const char *p = list;
	for (;;) {
		size_t len = strcspn(p, ",");
		if (len == 0 || len > 255) {
			snprintf(err, errlen, "alpn '%s': %s protocol name", list,
				 len ? "a too long" : "an empty");
			return -1;
		}
		if (n + 1 + len > sizeof(t->alpn)) {
			snprintf(err, errlen, "alpn '%s': longer than %zu bytes",
				 list, sizeof(t->alpn) - 1);
			return -1;
		}
		t->alpn[n++] = (unsigned char)len;
		memcpy(t->alpn + n, p, len);
		n += (unsigned)len;
		p += len;
		if (!*p)
			break;
		p++;
	}
	t->alpn_len = n;
	return 0;
}

/* Ours first: the first of our protocols the client offers. Without a
 * common one the handshake goes on without ALPN, as a server that knows
 * nothing of ALPN would. */
static int alpn_select(SSL *ssl, const unsigned char **out,
		       unsigned char *outlen, const unsigned char *in,
		       unsigned inlen, void *arg)
{
	struct tls *t = arg;
	unsigned char *o;
	(void)ssl;
	if (SSL_select_next_proto(&o, outlen, t->alpn, t->alpn_len, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* Append one line to warn. */
static void warn_add(char *warn, size_t warnlen, const char *line)
{
	size_t used = strlen(warn);
	if (used < warnlen)
		snprintf(warn + used, warnlen - used, "%s\n", line);
}

/* The private key should be the owner's alone. */
static void check_key_mode(const char *key, char *warn, size_t warnlen)
{
	struct stat st;
	char line[1200];
	if (stat(key, &st) < 0 || !(st.st_mode & 077))
		return;
	snprintf(line, sizeof(line), "key %s is readable by %s (mode %04o); "
		 "make it the owner's only: chmod 600 %s", key,
		 st.st_mode & 07 ? "everyone" : "its group",
		 (unsigned)(st.st_mode & 07777), key);
	warn_add(warn, warnlen, line);
}

static void check_validity(struct tls *t, const char *cert, char *warn,
			   size_t warnlen)
{
	X509 *x = SSL_CTX_get0_certificate(t->ctx);
	char line[1200];
	if (!x)
		return;
	if (X509_cmp_current_time(X509_get0_notAfter(x)) < 0) {
		snprintf(line, sizeof(line), "certificate %s has expired: "
			 "clients that verify it will refuse the handshake",
			 cert);
		warn_add(warn, warnlen, line);
	} else if (X509_cmp_current_time(X509_get0_notBefore(x)) > 0) {
		snprintf(line, sizeof(line), "certificate %s is not valid yet: "
			 "clients that verify it will refuse the handshake",
			 cert);
		warn_add(warn, warnlen, line);
	}
}

struct tls *tls_server_new(const char *cert, const char *key, const char *alpn,
			   char *warn, size_t warnlen, char *err, size_t errlen)
{
	if (warnlen)
		warn[0] = 0;
	if (!cert || !*cert || !key || !*key) {
		snprintf(err, errlen, "a TLS listener needs a certificate and "
			 "a key (--cert FILE --key FILE)");
		return NULL;
	}
	struct tls *t = tls_new(true, err, errlen);
	if (!t)
		return NULL;
	if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1) {
		snprintf(err, errlen, "certificate %s: %s%s", cert, ssl_reason(),
			 errno == ENOENT ? " (no such file)" : "");
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1) {
		unsigned long e = ERR_peek_error();
		if (ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH)
			snprintf(err, errlen, "key %s does not match "
				 "certificate %s", key, cert);
		else
			snprintf(err, errlen, "key %s: %s%s", key, ssl_reason(),
				 errno == ENOENT ? " (no such file)" : "");
		ERR_clear_error();
		goto fail;
	}
	if (SSL_CTX_check_private_key(t->ctx) != 1) {
		ERR_clear_error();
		snprintf(err, errlen, "key %s does not match certificate %s",
			 key, cert);
		goto fail;
	}
	if (alpn && *alpn) {
		if (alpn_parse(t, alpn, err, errlen) < 0)
			goto fail;
		SSL_CTX_set_alpn_select_cb(t->ctx, alpn_select, t);
	}
	check_key_mode(key, warn, warnlen);
	check_validity(t, cert, warn, warnlen);
	return t;
fail:
	tls_free(t);
	return NULL;
}

struct tls *tls_client_new(const char *ca, char *err, size_t errlen)
{
	struct tls *t = tls_new(false, err, errlen);
	if (!t)
		return NULL;
	int ok = ca && *ca ? SSL_CTX_load_verify_locations(t->ctx, ca, NULL) :
		 SSL_CTX_set_default_verify_paths(t->ctx);
	if (ok != 1) {
		snprintf(err, errlen, "CA file %s: %s", ca && *ca ? ca :
			 "(system default)", ssl_reason());
		tls_free(t);
		return NULL;
	}
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	return t;
}

struct ssl_st *tls_accept(struct tls *t)
{
	SSL *ssl = SSL_new(t->ctx);
	if (ssl)
		SSL_set_accept_state(ssl);
	return ssl;
}

struct ssl_st *tls_connect(struct tls *t, const char *host,
			   const unsigned char *proto, unsigned len)
{
	SSL *ssl = SSL_new(t->ctx);
	if (!ssl)
		return NULL;
	SSL_set_connect_state(ssl);
	unsigned char ip[16];
	bool literal = inet_pton(AF_INET, host, ip) == 1 ||
		       inet_pton(AF_INET6, host, ip) == 1;
	int ok = literal ?
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) :
		SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
	if (ok && len > 0) {
		unsigned char wire[TLS_ALPN_MAX];
		wire[0] = (unsigned char)len;
		memcpy(wire + 1, proto, len);
		/* Unlike the rest of OpenSSL, 0 means success here. */
		ok = SSL_set_alpn_protos(ssl, wire, len + 1) == 0;
	}
	if (!ok) {
		SSL_free(ssl);
		ERR_clear_error();
		return NULL;
	}
	return ssl;
}

void tls_ssl_free(struct ssl_st *ssl)
{
	SSL_free(ssl);
}

void tls_alpn_chosen(struct ssl_st *ssl, const unsigned char **proto,
		     unsigned *len)
{
	SSL_get0_alpn_selected(ssl, proto, len);
}

const char *tls_version(struct ssl_st *ssl)
{
	return SSL_get_version(ssl);
}
