/*
 * libFuzzer target for relay's TLS byte path: server/sock.c's TLS
 * operations (its BIO, handshake, read, write, shutdown and the mapping
 * of OpenSSL's errors to a sock_fail) and the contexts of server/tls.c
 * (certificate loading, ALPN selection and passthrough, SNI and the
 * verified host name). The input is a hostile peer: the first byte picks
 * whether relay is the server (a tls:// listener's context, the peer a
 * client) or the client (tls_connect to a host, verified against a CA,
 * the peer a server) and how both are configured; the rest is a script
 * that interleaves relay's operations, through the real sock_ops over a
 * socketpair, with what the peer does. The peer is a genuine OpenSSL
 * endpoint writing to memory, so the script can run a real handshake and
 * then send application data, a close_notify, a key update or a
 * renegotiation, and it can also tamper with the peer's bytes before they
 * reach the socket (flip, drop, inject raw bytes), send a FIN or go away.
 *
 * Determinism: Debian's OpenSSL has no fuzzing mode, so randomness comes
 * from a RAND_METHOD of our own, a counter hash restarted for every input,
 * with separate streams for relay and the peer (each side's randoms, key
 * shares and signatures depend on its own draws only, so a recorded flight
 * of the peer replays as raw bytes: the seeds' ClientHello and server
 * flights do). The certificates are made in-process from the same stream
 * (so identical in every run), with fixed validity dates, and the server
 * context's session cache is flushed per input. What remains is the clock
 * in session tickets relay or the peer issue, which changes only what the
 * other side receives as opaque ticket bytes.
 *
 * The oracle, checked after every operation relay makes:
 *  - a failure is classified into a sock_fail valid for its phase: any
 *    handshake failure but "none" and "timeout" (the loop's), certificate
 *    failures only where relay verifies (the client side); after the
 *    handshake only a reset, a socket error, a peer alert or a protocol
 *    error; and when the peer only ran a genuine session, the one its
 *    TLS version, certificate and relay's host name call for;
 *  - SOCK_AGAIN comes with want holding EPOLLIN or EPOLLOUT; SOCK_OK moves
 *    between 1 and len bytes;
 *  - the thread's OpenSSL error queue is empty (sock.h promises it);
 *  - a failed handshake never yields data, and nothing is read after
 *    SOCK_EOF;
 *  - unless the peer's bytes were tampered with, each side receives a
 *    prefix of what the other wrote, and at the end of a genuine session
 *    the handshake completed and relay read all the peer wrote; ALPN
 *    chose nothing or a protocol both sides offered.
 */
#define OPENSSL_SUPPRESS_DEPRECATED	/* RAND_set_rand_method, see above */

#include <errno.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sock.h"
#include "tls.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define OUT_MAX		(64 << 10)	/* peer bytes not yet on the wire */
#define STREAM_MAX	(256 << 10)	/* plaintext each side writes at most */
#define IO_MAX		4096		/* one read or write */
#define SETTLE_ROUNDS	64

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "fuzz_tls: %s:%d: %s\n", __FILE__, __LINE__, #c); \
	abort(); } } while (0)

/* ---- deterministic randomness ---- */

enum { RELAY, PEER };
static uint64_t rng_ctr[2];
static int rng_side;

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ x >> 30) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ x >> 27) * 0x94d049bb133111ebull;
	return x ^ x >> 31;
}

static int rng_bytes(unsigned char *buf, int num)
{
	for (int i = 0; i < num; i++)
		buf[i] = (unsigned char)mix(rng_ctr[rng_side]++ ^
					    (uint64_t)rng_side << 62);
	return 1;
}

static int rng_status(void)
{
	return 1;
}

static const RAND_METHOD rng_method = {
	.bytes = rng_bytes, .pseudorand = rng_bytes, .status = rng_status,
};

static void rng_restart(void)
{
	rng_ctr[RELAY] = rng_ctr[PEER] = 0;
	rng_side = RELAY;
}

/* Byte i of a side's plaintext stream. */
static uint8_t pattern(int side, uint64_t i)
{
	return (uint8_t)mix(i ^ (uint64_t)side << 40);
}

/* ---- certificates ---- */

enum { C_GOOD, C_EXPIRED, C_WRONGNAME, C_ROGUE, NCERTS };
static const char *const hosts[4] = {
	"localhost", "127.0.0.1", "::1", "not-this-host.example",
};
/* The failure a genuine session must end in: [cert][host]. */
static const enum sock_fail verdict[NCERTS][4] = {
	[C_GOOD] = { SOCK_FAIL_none, SOCK_FAIL_none, SOCK_FAIL_none,
		     SOCK_FAIL_cert_verify },
	[C_EXPIRED] = { SOCK_FAIL_cert_expired, SOCK_FAIL_cert_expired,
			SOCK_FAIL_cert_expired, SOCK_FAIL_cert_verify },
	[C_WRONGNAME] = { SOCK_FAIL_cert_verify, SOCK_FAIL_cert_verify,
			  SOCK_FAIL_cert_verify, SOCK_FAIL_none },
	[C_ROGUE] = { SOCK_FAIL_cert_verify, SOCK_FAIL_cert_verify,
		      SOCK_FAIL_cert_verify, SOCK_FAIL_cert_verify },
};

static void add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v;
	X509V3_set_ctx(&v, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v, nid, value);
	CHECK(e && X509_add_ext(x, e, -1));
	X509_EXTENSION_free(e);
}

/* A certificate for key, signed by issuer's ikey (itself when NULL). */
static X509 *make_cert(const char *cn, const char *san, EVP_PKEY *key,
		       X509 *issuer, EVP_PKEY *ikey, time_t from, time_t to)
{
	static long serial = 1000;
	X509 *x = X509_new();
	CHECK(x && X509_set_version(x, X509_VERSION_3));
	ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
	X509_NAME *n = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC,
				   (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : n);
	ASN1_TIME_set(X509_getm_notBefore(x), from);
	ASN1_TIME_set(X509_getm_notAfter(x), to);
	X509_set_pubkey(x, key);
	add_ext(x, issuer ? issuer : x, NID_basic_constraints,
		san ? "CA:FALSE" : "critical,CA:TRUE");
	if (san)
		add_ext(x, issuer, NID_subject_alt_name, san);
	else
		add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign");
	CHECK(X509_sign(x, issuer ? ikey : key, EVP_sha256()));
	return x;
}

static void write_pem(const char *path, X509 *x, EVP_PKEY *key)
{
	FILE *f = fopen(path, "w");
	CHECK(f);
	CHECK(x ? PEM_write_X509(f, x) :
	      PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL));
	CHECK(fclose(f) == 0);
}

/* ---- the contexts, made once ---- */

static struct tls *relay_server[2];	/* without, with ALPN */
static struct tls *relay_client;
static SSL_CTX *peer_client;
static SSL_CTX *peer_server[NCERTS];

static SSL_CTX *peer_server_ctx(X509 *x, EVP_PKEY *key)
{
	SSL_CTX *c = SSL_CTX_new(TLS_server_method());
	CHECK(c && SSL_CTX_use_certificate(c, x) == 1 &&
	      SSL_CTX_use_PrivateKey(c, key) == 1);
	SSL_CTX_set_min_proto_version(c, TLS1_VERSION);
	SSL_CTX_set_read_ahead(c, 1);
	/* Every input starts afresh: no session to resume, none piling up. */
	SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
	return c;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	CHECK(RAND_set_rand_method(&rng_method) == 1);
	rng_restart();
	/* Fixed dates: the certificates are the same in every run. */
	const time_t y2000 = 946684800, y2100 = 4102444800;
	const time_t jan1 = 1577836800, jan2 = 1577923200;	/* 2020 */
	const char *san = "DNS:localhost,IP:127.0.0.1,IP:::1";
	EVP_PKEY *ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *rogue_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	EVP_PKEY *key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	CHECK(ca_key && rogue_key && key);
	X509 *ca = make_cert("relay test CA", NULL, ca_key, NULL, NULL,
			     y2000, y2100);
	X509 *rogue = make_cert("rogue test CA", NULL, rogue_key, NULL, NULL,
				y2000, y2100);
	X509 *certs[NCERTS] = {
		[C_GOOD] = make_cert("localhost", san, key, ca, ca_key,
				     y2000, y2100),
		[C_EXPIRED] = make_cert("localhost", san, key, ca, ca_key,
					jan1, jan2),
		[C_WRONGNAME] = make_cert("not-this-host.example",
					  "DNS:not-this-host.example", key, ca,
					  ca_key, y2000, y2100),
		[C_ROGUE] = make_cert("localhost", san, key, rogue, rogue_key,
				      y2000, y2100),
	};

	/* relay loads its own from files, as it does in service. */
	const char *tmp = getenv("TMPDIR");
	char dir[512], cert[600], keyf[600], caf[600];
	snprintf(dir, sizeof(dir), "%s/fuzz_tls.XXXXXX", tmp ? tmp : "/tmp");
	CHECK(mkdtemp(dir));
	snprintf(cert, sizeof(cert), "%s/server.pem", dir);
	snprintf(keyf, sizeof(keyf), "%s/server.key", dir);
	snprintf(caf, sizeof(caf), "%s/ca.pem", dir);
	write_pem(cert, certs[C_GOOD], NULL);
	write_pem(keyf, NULL, key);
	CHECK(chmod(keyf, 0600) == 0);
	write_pem(caf, ca, NULL);
	char warn[512], err[512];
	for (int alpn = 0; alpn < 2; alpn++) {
		relay_server[alpn] = tls_server_new(cert, keyf,
				alpn ? "h2,http/1.1" : NULL, warn, sizeof(warn),
				err, sizeof(err));
		CHECK(relay_server[alpn] && !warn[0]);
	}
	relay_client = tls_client_new(caf, err, sizeof(err));
	CHECK(relay_client);
	CHECK(unlink(cert) == 0 && unlink(keyf) == 0 && unlink(caf) == 0 &&
	      rmdir(dir) == 0);

	peer_client = SSL_CTX_new(TLS_client_method());
	CHECK(peer_client);
	SSL_CTX_set_min_proto_version(peer_client, TLS1_VERSION);
	SSL_CTX_set_read_ahead(peer_client, 1);
	for (int i = 0; i < NCERTS; i++)
		peer_server[i] = peer_server_ctx(certs[i], key);
	for (int i = 0; i < NCERTS; i++)
		X509_free(certs[i]);
	X509_free(ca);
	X509_free(rogue);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(rogue_key);
	EVP_PKEY_free(key);
	CHECK(ERR_peek_error() == 0);
	return 0;
}

/* ---- the peer ---- */

/* ALPN: what the peer client offers, or the relay client passes on. */
static const unsigned char *const offers[4] = {
	NULL, (const unsigned char *)"\x02h2",
	(const unsigned char *)"\x08http/1.1\x02h2",
	(const unsigned char *)"\x06spdy/1",
};

struct peer {
	SSL *ssl;
	BIO *in, *out;		/* memory: the wire is ours to shape */
	int fd;			/* -1: gone */
	bool failed, fin, tampered, meddled;
	uint64_t wrote, got;	/* plaintext */
	const unsigned char *alpn;	/* what a peer server selects */
	size_t out_len;
	uint8_t out_buf[OUT_MAX];	/* last: not cleared per input */
};

struct relay {
	struct sock s;
	bool server, up, dead, eof, shut;
	uint32_t retry;		/* a write's length after SOCK_AGAIN */
	uint64_t wrote, got;
	int cert, host, offer;
	enum sock_fail expect;	/* how a genuine session's handshake ends */
	unsigned char alpn[16];	/* the protocols relay offers, wire format */
};

static struct peer peer;
static struct relay relay;

/* Whether the wire-format list has proto[0..len). */
static bool alpn_has(const unsigned char *list, const unsigned char *proto,
		     unsigned len)
{
	for (; list && *list; list += 1 + *list)
		if (*list == len && memcmp(list + 1, proto, len) == 0)
			return true;
	return false;
}

/* A hostile server picks whatever it likes, offered or not. */
static int peer_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		     const unsigned char *in, unsigned inlen, void *arg)
{
	(void)ssl;
	(void)in;
	(void)inlen;
	(void)arg;
	if (!peer.alpn)
		return SSL_TLSEXT_ERR_NOACK;
	*out = peer.alpn + 1;
	*outlen = peer.alpn[0];
	return SSL_TLSEXT_ERR_OK;
}

/* Move what the peer's TLS wrote to out_buf; beyond OUT_MAX it is lost. */
static void peer_pull(void)
{
	size_t n;
	while (peer.out_len < OUT_MAX &&
	       BIO_read_ex(peer.out, peer.out_buf + peer.out_len,
			   OUT_MAX - peer.out_len, &n) == 1)
		peer.out_len += n;
	if (BIO_ctrl_pending(peer.out)) {
		(void)BIO_reset(peer.out);
		peer.tampered = true;
	}
}

/* The peer's errors share the thread's queue with relay's: leave none. */
static void peer_done(int r)
{
	if (r <= 0) {
		int e = SSL_get_error(peer.ssl, r);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
			peer.failed = true;
	}
	ERR_clear_error();
	peer_pull();
}

/* Put up to len bytes of out_buf on the wire. */
static void peer_push(size_t len)
{
	if (peer.fd < 0 || peer.fin || peer.out_len == 0)
		return;
	if (len > peer.out_len)
		len = peer.out_len;
	ssize_t r = send(peer.fd, peer.out_buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (r <= 0)
		return;
	peer.out_len -= (size_t)r;
	memmove(peer.out_buf, peer.out_buf + r, peer.out_len);
}

/* Take up to len bytes relay sent off the wire into the peer's TLS. */
static void peer_drain(size_t len)
{
	uint8_t buf[IO_MAX];
	if (peer.fd < 0)
		return;
	ssize_t r = recv(peer.fd, buf, len < sizeof(buf) ? len : sizeof(buf),
			 MSG_DONTWAIT);
	if (r > 0)
		CHECK(BIO_write(peer.in, buf, (int)r) == (int)r);
}

/* Handshake, then read what relay wrote, checking it. */
static void peer_run(void)
{
	uint8_t buf[IO_MAX];
	size_t n;
	rng_side = PEER;
	if (peer.failed)
		return;
	if (!SSL_is_init_finished(peer.ssl)) {
		peer_done(SSL_do_handshake(peer.ssl));
		if (!SSL_is_init_finished(peer.ssl))
			return;
	}
	for (int i = 0; i < 64 && !peer.failed; i++) {
		int r = SSL_read_ex(peer.ssl, buf, sizeof(buf), &n);
		peer_done(r);
		if (r != 1)
			break;
		for (size_t k = 0; k < n && !peer.tampered; k++)
			CHECK(buf[k] == pattern(RELAY, peer.got + k));
		peer.got += n;
		CHECK(peer.got <= relay.wrote);
	}
}

static void peer_write(size_t len)
{
	uint8_t buf[IO_MAX];
	size_t n;
	rng_side = PEER;
	if (peer.failed || peer.wrote + len > STREAM_MAX)
		return;
	for (size_t k = 0; k < len; k++)
		buf[k] = pattern(PEER, peer.wrote + k);
	int r = SSL_write_ex(peer.ssl, buf, len, &n);
	if (r == 1)
		peer.wrote += n;
	peer_done(r);
}

/* ---- relay ---- */

static bool fail_in(enum sock_fail f, unsigned set)
{
	return f < SOCK_NFAILS && (set >> f & 1);
}

#define F(name) (1u << SOCK_FAIL_##name)
#define HANDSHAKE_FAILS (F(eof) | F(reset) | F(io) | F(not_tls) | F(version) | \
	F(cipher) | F(peer_alert) | F(protocol))
#define CERT_FAILS (F(cert_expired) | F(cert_verify))
#define DATA_FAILS (F(reset) | F(io) | F(peer_alert) | F(protocol))

/* What every operation promises, whatever the peer did. */
static void relay_check(enum sock_rc rc, unsigned fails)
{
	CHECK(ERR_peek_error() == 0);
	if (rc == SOCK_AGAIN)
		CHECK(relay.s.want & (EPOLLIN | EPOLLOUT));
	if (rc == SOCK_ERROR) {
		if (!fail_in(relay.s.fail, fails)) {
			fprintf(stderr, "fuzz_tls: a failure classified %s (%s)\n",
				sock_fail_name(relay.s.fail),
				relay.up ? "after the handshake" : "handshake");
			abort();
		}
		relay.dead = true;
	}
}

static void relay_handshake(void)
{
	rng_side = RELAY;
	enum sock_rc rc = relay.s.ops->handshake(&relay.s);
	CHECK(rc != SOCK_EOF);
	relay_check(rc, HANDSHAKE_FAILS | (relay.server ? 0 : CERT_FAILS));
	if (rc == SOCK_OK) {
		relay.up = true;
		const unsigned char *proto;
		unsigned len;
		tls_alpn_chosen(relay.s.ssl, &proto, &len);
		/* Both sides offered it (relay's client: its own, whatever
		 * the server picked). */
		if (len)
			CHECK(alpn_has(relay.alpn, proto, len));
		CHECK(strcmp(tls_version(relay.s.ssl), "TLSv1.2") == 0 ||
		      strcmp(tls_version(relay.s.ssl), "TLSv1.3") == 0);
	} else if (rc == SOCK_ERROR) {
		/* A failed handshake yields no data. */
		if (!peer.meddled)
			CHECK(relay.s.fail == relay.expect);
		uint8_t buf[64];
		size_t n = 0;
		rc = relay.s.ops->read(&relay.s, buf, sizeof(buf), &n);
		CHECK(rc != SOCK_OK && ERR_peek_error() == 0);
	}
}

/* Returns the result, for loops that read until relay must wait. */
static enum sock_rc relay_read(size_t len)
{
	uint8_t buf[IO_MAX];
	size_t n = 0;
	rng_side = RELAY;
	enum sock_rc rc = relay.s.ops->read(&relay.s, buf, len, &n);
	relay_check(rc, DATA_FAILS);
	if (rc == SOCK_OK) {
		CHECK(!relay.eof);	/* nothing after the end */
		CHECK(n > 0 && n <= len);
		for (size_t k = 0; k < n && !peer.tampered; k++)
			CHECK(buf[k] == pattern(PEER, relay.got + k));
		relay.got += n;
		CHECK(peer.tampered || relay.got <= peer.wrote);
	}
	if (rc == SOCK_EOF)
		relay.eof = true;
	return rc;
}

static void relay_write(size_t len)
{
	uint8_t buf[IO_MAX];
	size_t n = 0;
	rng_side = RELAY;
	if (relay.retry)
		len = relay.retry;	/* the same bytes again (sock.h) */
	if (relay.wrote + len > STREAM_MAX)
		return;
	for (size_t k = 0; k < len; k++)
		buf[k] = pattern(RELAY, relay.wrote + k);
	enum sock_rc rc = relay.s.ops->write(&relay.s, buf, len, &n);
	CHECK(rc != SOCK_EOF);
	relay_check(rc, DATA_FAILS);
	relay.retry = rc == SOCK_AGAIN ? (uint32_t)len : 0;
	if (rc == SOCK_OK) {
		CHECK(n > 0 && n <= len);
		relay.wrote += n;
	}
}

static void relay_shutdown(void)
{
	rng_side = RELAY;
	enum sock_rc rc = relay.s.ops->shutdown(&relay.s);
	CHECK(rc == SOCK_OK || rc == SOCK_AGAIN || rc == SOCK_ERROR);
	relay_check(rc, DATA_FAILS);
	relay.shut = rc == SOCK_OK;
}

/* What the loop would do on an event: finish the handshake, or read until
 * relay has to wait. */
static void relay_step(void)
{
	if (relay.dead)
		return;
	if (!relay.up) {
		relay_handshake();
		return;
	}
	for (int i = 0; i < 16 && !relay.dead && !relay.eof; i++)
		if (relay_read(IO_MAX) != SOCK_OK)
			break;
}

/* ---- one input ---- */

static const uint8_t *in_p, *in_end;

static uint8_t next(void)
{
	return in_p < in_end ? *in_p++ : 0;
}

static void setup(uint8_t how, uint8_t bufs)
{
	int sv[2];
	rng_restart();
	memset(&relay, 0, sizeof(relay));
	memset(&peer, 0, offsetof(struct peer, out_buf));
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
	/* A small send buffer makes relay's writes partial, then blocked. */
	static const int sndbuf[4] = { 4096, 8192, 32768, 262144 };
	CHECK(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sndbuf[bufs & 3],
			 sizeof(int)) == 0);
	relay.server = !(how & 1);
	bool tls12 = how >> 1 & 1;
	relay.offer = how >> 2 & 3;
	relay.host = how >> 4 & 3;
	relay.cert = how >> 6 & 3;
	SSL *ssl;
	if (relay.server) {
		SSL_CTX_flush_sessions(relay_server[relay.offer & 1]->ctx, 0);
		ssl = tls_accept(relay_server[relay.offer & 1]);
		if (relay.offer & 1)
			memcpy(relay.alpn, "\x02h2\x08http/1.1", 13);
		peer.ssl = SSL_new(peer_client);
		CHECK(peer.ssl);
		SSL_set_connect_state(peer.ssl);
		if (relay.host < 3)
			SSL_set_tlsext_host_name(peer.ssl, hosts[relay.host]);
		const unsigned char *o = offers[(relay.offer >> 1) + (bufs >> 2 & 1) * 2];
		if (o)
			CHECK(SSL_set_alpn_protos(peer.ssl, o,
					strlen((const char *)o)) == 0);
	} else {
		/* The first of a list: relay passes one protocol on. */
		const unsigned char *o = offers[relay.offer];
		ssl = tls_connect(relay_client, hosts[relay.host],
				  o ? o + 1 : NULL, o ? o[0] : 0);
		if (o)
			memcpy(relay.alpn, o, 1u + o[0]);
		peer.ssl = SSL_new(peer_server[relay.cert]);
		CHECK(peer.ssl);
		SSL_set_accept_state(peer.ssl);
		peer.alpn = offers[bufs >> 2 & 3];
		/* One relay did not offer ends a genuine session. */
		peer.meddled = peer.alpn &&
			!alpn_has(relay.alpn, peer.alpn + 1, peer.alpn[0]);
		SSL_CTX_set_alpn_select_cb(peer_server[relay.cert], peer_alpn,
					   NULL);
	}
	CHECK(ssl && sock_init_tls(&relay.s, sv[0], ssl) == 0);
	relay.expect = relay.server ? SOCK_FAIL_none :
		       verdict[relay.cert][relay.host];
	if (tls12 && bufs & 8) {
		/* A peer that stops at TLS 1.1, below relay's minimum. */
		SSL_set_security_level(peer.ssl, 0);
		SSL_set_max_proto_version(peer.ssl, TLS1_1_VERSION);
		relay.expect = SOCK_FAIL_version;
	} else if (tls12) {
		SSL_set_max_proto_version(peer.ssl, TLS1_2_VERSION);
	}
	peer.in = BIO_new(BIO_s_mem());
	peer.out = BIO_new(BIO_s_mem());
	CHECK(peer.in && peer.out);
	/* An empty memory BIO asks to be retried, as a socket would. */
	BIO_set_mem_eof_return(peer.in, -1);
	SSL_set_bio(peer.ssl, peer.in, peer.out);
	peer.fd = sv[1];
}

/* Run both sides until nothing moves. */
static void settle(void)
{
	for (int i = 0; i < SETTLE_ROUNDS; i++) {
		uint64_t before = relay.got + peer.got + peer.out_len +
				  relay.up + relay.dead + relay.eof;
		peer_push(OUT_MAX);
		relay_step();
		if (relay.up && !relay.dead && relay.retry)
			relay_write(0);
		peer_drain(IO_MAX);
		peer_run();
		uint64_t after = relay.got + peer.got + peer.out_len +
				 relay.up + relay.dead + relay.eof;
		if (after == before && i > 2)
			break;
	}
}

static void finish(void)
{
	settle();
	/* A genuine session completes and loses nothing. */
	if (!peer.meddled && !peer.tampered && !peer.failed &&
	    relay.expect == SOCK_FAIL_none) {
		CHECK(relay.up && !relay.dead);
		CHECK(relay.got == peer.wrote);
	}
	relay.s.ops->close(&relay.s, relay.dead);
	CHECK(ERR_peek_error() == 0);
	SSL_free(peer.ssl);
	if (peer.fd >= 0)
		close(peer.fd);
	ERR_clear_error();
}

/* The script: one byte an action, some with an argument byte. */
enum {
	A_RELAY_STEP, A_RELAY_READ, A_RELAY_WRITE, A_RELAY_SHUTDOWN,
	A_PEER_RUN, A_PEER_WRITE, A_PEER_PUSH, A_PEER_RAW, A_PEER_FLIP,
	A_PEER_CLOSE_NOTIFY, A_PEER_FIN, A_PEER_GONE, A_PEER_DRAIN,
	A_PEER_KEY_UPDATE, A_PEER_DROP, A_PEER_RENEGOTIATE,
};

static void act(uint8_t a)
{
	uint8_t arg = (a & 16) ? next() : 0;
	switch (a & 15) {
	case A_RELAY_STEP:
		relay_step();
		break;
	case A_RELAY_READ:
		if (relay.up && !relay.dead)
			relay_read(1 + arg * 16u);
		break;
	case A_RELAY_WRITE:
		if (relay.up && !relay.dead && !relay.shut)
			relay_write(1 + arg * 16u);
		break;
	case A_RELAY_SHUTDOWN:
		if (relay.up && !relay.dead && !relay.shut && !relay.retry)
			relay_shutdown();
		break;
	case A_PEER_RUN:
		peer_run();
		break;
	case A_PEER_WRITE:
		peer_write(1 + arg * 16u);
		break;
	case A_PEER_PUSH:
		peer_push(arg ? arg * 16u : OUT_MAX);
		break;
	case A_PEER_RAW: {
		/* arg bytes of the input, as they are, behind what is queued */
		size_t len = (size_t)(in_end - in_p) < arg ?
			     (size_t)(in_end - in_p) : arg;
		if (peer.out_len + len > OUT_MAX)
			len = OUT_MAX - peer.out_len;
		memcpy(peer.out_buf + peer.out_len, in_p, len);
		peer.out_len += len;
		in_p += len;
		peer.tampered = peer.meddled = true;
		break;
	}
	case A_PEER_FLIP: {
		uint8_t x = next();
		if (peer.out_len && x) {
			peer.out_buf[(arg * 7u) % peer.out_len] ^= x;
			peer.tampered = peer.meddled = true;
		}
		break;
	}
	case A_PEER_CLOSE_NOTIFY:
		rng_side = PEER;
		peer_done(SSL_shutdown(peer.ssl));
		peer.meddled = true;
		break;
	case A_PEER_FIN:
		if (peer.fd >= 0 && !peer.fin)
			shutdown(peer.fd, SHUT_WR);
		peer.fin = peer.meddled = true;
		break;
	case A_PEER_GONE:
		/* A reset when relay's bytes are left unread. */
		if (peer.fd >= 0)
			close(peer.fd);
		peer.fd = -1;
		peer.meddled = true;
		break;
	case A_PEER_DRAIN:
		peer_drain(arg ? arg * 16u : IO_MAX);
		break;
	case A_PEER_KEY_UPDATE:
		rng_side = PEER;
		if (SSL_is_init_finished(peer.ssl) &&
		    SSL_version(peer.ssl) == TLS1_3_VERSION)
			peer_done(SSL_key_update(peer.ssl, arg & 1 ?
					SSL_KEY_UPDATE_REQUESTED :
					SSL_KEY_UPDATE_NOT_REQUESTED));
		peer.meddled = true;
		break;
	case A_PEER_DROP: {
		size_t len = arg < peer.out_len ? arg : peer.out_len;
		if (len) {
			memmove(peer.out_buf, peer.out_buf + len,
				peer.out_len - len);
			peer.out_len -= len;
			peer.tampered = peer.meddled = true;
		}
		break;
	}
	case A_PEER_RENEGOTIATE:
		rng_side = PEER;
		if (SSL_is_init_finished(peer.ssl) &&
		    SSL_version(peer.ssl) == TLS1_2_VERSION) {
			peer_done(SSL_renegotiate(peer.ssl));
			peer_done(SSL_do_handshake(peer.ssl));
		}
		peer.meddled = true;
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	in_p = data + 2;
	in_end = data + size;
	setup(data[0], data[1]);
	while (in_p < in_end)
		act(next());
	finish();
	return 0;
}
