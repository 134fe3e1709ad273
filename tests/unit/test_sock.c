/* Unit tests for server/sock: the plain and TLS operation tables over real
 * loopback TCP pairs, non-blocking throughout: what "want" says after each
 * call, receive timestamps, half-close, resets, TLS handshakes driven by
 * hand, ALPN, and handshake failures by reason (garbage, wrong version,
 * untrusted, expired and misnamed certificates, a peer that goes away). */
#include "check.h"
#include "certs.h"
#include "clock.h"
#include "../../server/sock.h"
#include "../../server/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>


/* A connected non-blocking loopback TCP pair. */
static void tcp_pair(int *a, int *b)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int l = socket(AF_INET, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&sa, len) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) < 0) {
		perror("listen");
		exit(1);
	}
	*a = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(*a, (struct sockaddr *)&sa, len) < 0 ||
	    (*b = accept4(l, NULL, NULL, SOCK_NONBLOCK)) < 0) {
		perror("connect");
		exit(1);
	}
	close(l);
	fcntl(*a, F_SETFL, fcntl(*a, F_GETFL) | O_NONBLOCK);
}

/* Wait until fd is readable (or 2 s passed). */
static void wait_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	poll(&p, 1, 2000);
}

/* Read exactly len bytes through s, waiting as s->want says. */
static enum sock_rc read_n(struct sock *s, char *buf, size_t len)
{
	size_t got = 0, n;
	for (int i = 0; i < 200 && got < len; i++) {
		enum sock_rc rc = s->ops->read(s, buf + got, len - got, &n);
		if (rc == SOCK_OK)
			got += n;
		else if (rc == SOCK_AGAIN)
			poll(&(struct pollfd){ .fd = s->fd, .events = s->want & EPOLLIN ?
					       POLLIN : POLLOUT }, 1, 50);
		else
			return rc;
	}
	return got == len ? SOCK_OK : SOCK_AGAIN;
}

/* Write all of buf through s. */
static enum sock_rc write_n(struct sock *s, const char *buf, size_t len)
{
	size_t put = 0, n;
	for (int i = 0; i < 200 && put < len; i++) {
		enum sock_rc rc = s->ops->write(s, buf + put, len - put, &n);
		if (rc == SOCK_OK)
			put += n;
		else if (rc == SOCK_AGAIN)
			poll(&(struct pollfd){ .fd = s->fd, .events = POLLOUT }, 1, 50);
		else
			return rc;
	}
	return put == len ? SOCK_OK : SOCK_AGAIN;
}

/* The kernel turns receive timestamps on lazily (from a work queue) when
 * the first socket asks, and off when the last one goes: until then reads
 * carry none. Send bytes from w to r until one arrives stamped (bounded). */
static void await_stamps(struct sock *w, struct sock *r)
{
	char c;
	for (int i = 0; i < 100; i++) {
		CHECK_EQ_INT(write_n(w, "w", 1), SOCK_OK);
		CHECK_EQ_INT(read_n(r, &c, 1), SOCK_OK);
		if (r->rx_ns)
			return;
		usleep(10000);
	}
}

/* Run both handshakes until neither waits; results in ra, rb. */
static void handshake(struct sock *a, struct sock *b, enum sock_rc *ra,
		      enum sock_rc *rb)
{
	*ra = *rb = SOCK_AGAIN;
	for (int i = 0; i < 400 && (*ra == SOCK_AGAIN || *rb == SOCK_AGAIN); i++) {
		if (*ra == SOCK_AGAIN)
			*ra = a->ops->handshake(a);
		if (*rb == SOCK_AGAIN)
			*rb = b->ops->handshake(b);
		struct pollfd p[2] = { { .fd = a->fd, .events = POLLIN },
				       { .fd = b->fd, .events = POLLIN } };
		if (*ra == SOCK_AGAIN || *rb == SOCK_AGAIN)
			poll(p, 2, 10);
	}
}

static void test_plain(void)
{
	int a, b;
	char buf[64];
	size_t n;
	struct sock sa, sb;
	tcp_pair(&a, &b);
	sock_init_plain(&sa, a);
	sock_init_plain(&sb, b);
	sock_stamp_arrivals(&sb);

	/* Nothing there: wait for input. */
	CHECK_EQ_INT(sb.ops->read(&sb, buf, sizeof(buf), &n), SOCK_AGAIN);
	CHECK_EQ_INT(sb.want, EPOLLIN);

	await_stamps(&sa, &sb);
	int64_t before = clock_ns(CLOCK_REALTIME);
	CHECK_EQ_INT(sa.ops->write(&sa, "hello", 5, &n), SOCK_OK);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(sa.want, 0);
	wait_in(b);
	CHECK_EQ_INT(sb.ops->read(&sb, buf, sizeof(buf), &n), SOCK_OK);
	CHECK_EQ_INT(n, 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	/* A short read knows the socket is empty without another call. */
	CHECK_EQ_INT(sb.want, EPOLLIN);
	/* The kernel's receive time, between the send and now. */
	CHECK(sb.rx_ns >= before - 1000000 && sb.rx_ns <= clock_ns(CLOCK_REALTIME));
	/* Stamps are per socket: sa did not ask, though the kernel now
	 * stamps every packet. */
	CHECK_EQ_INT(write_n(&sb, "x", 1), SOCK_OK);
	CHECK_EQ_INT(read_n(&sa, buf, 1), SOCK_OK);
	CHECK_EQ_INT(sa.rx_ns, 0);

	/* A full read may have left more: try again at once. */
	CHECK_EQ_INT(sa.ops->write(&sa, "0123456789", 10, &n), SOCK_OK);
	wait_in(b);
	CHECK_EQ_INT(sb.ops->read(&sb, buf, 4, &n), SOCK_OK);
	CHECK_EQ_INT(sb.want, 0);
	CHECK_EQ_INT(read_n(&sb, buf, 6), SOCK_OK);
	CHECK(memcmp(buf, "456789", 6) == 0);

	/* Half-close: b sees the end, and can still write to a. */
	CHECK_EQ_INT(sa.ops->shutdown(&sa), SOCK_OK);
	wait_in(b);
	CHECK_EQ_INT(sb.ops->read(&sb, buf, sizeof(buf), &n), SOCK_EOF);
	CHECK_EQ_INT(sb.ops->write(&sb, "back", 4, &n), SOCK_OK);
	CHECK_EQ_INT(read_n(&sa, buf, 4), SOCK_OK);

	/* An aborted close is a reset on the other side, and writing to it
	 * is an error, never a SIGPIPE. */
	sb.ops->close(&sb, true);
	CHECK_EQ_INT(sb.fd, -1);
	wait_in(a);
	CHECK_EQ_INT(sa.ops->read(&sa, buf, sizeof(buf), &n), SOCK_ERROR);
	CHECK_EQ_INT(sa.fail, SOCK_FAIL_reset);
	enum sock_rc rc = SOCK_OK;
	for (int i = 0; i < 3 && rc == SOCK_OK; i++)
		rc = sa.ops->write(&sa, "x", 1, &n);
	CHECK_EQ_INT(rc, SOCK_ERROR);
	CHECK_EQ_INT(sa.fail, SOCK_FAIL_reset);
	sa.ops->close(&sa, false);
}

static void test_plain_full(void)
{
	int a, b;
	size_t n;
	struct sock sa;
	static char big[65536];
	tcp_pair(&a, &b);
	sock_init_plain(&sa, a);
	enum sock_rc rc = SOCK_OK;
	int i;
	for (i = 0; i < 10000 && rc == SOCK_OK; i++)
		rc = sa.ops->write(&sa, big, sizeof(big), &n);
	/* The peer reads nothing: the kernel's buffers fill and we wait. */
	CHECK_EQ_INT(rc, SOCK_AGAIN);
	CHECK_EQ_INT(sa.want, EPOLLOUT);
	CHECK(i < 10000);
	sa.ops->close(&sa, false);
	close(b);
}

static struct tls *server(const char *pem, const char *alpn)
{
	char warn[1024], err[1024];
	struct tls *t = tls_server_new(cert(pem), cert("server.key"), alpn, warn,
				       sizeof(warn), err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return t;
}

static struct tls *client(const char *ca)
{
	char err[1024];
	struct tls *t = tls_client_new(cert(ca), err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return t;
}

/* A TLS pair: cs (client, for host, offering proto) and ss (server). */
static void tls_pair(struct tls *st, struct tls *ct, const char *host,
		     const char *proto, struct sock *cs, struct sock *ss)
{
	int a, b;
	tcp_pair(&a, &b);
	struct ssl_st *c = tls_connect(ct, host, (const unsigned char *)proto,
				       proto ? (unsigned)strlen(proto) : 0);
	struct ssl_st *s = tls_accept(st);
	CHECK(c && s);
	CHECK(sock_init_tls(cs, a, c) == 0);
	CHECK(sock_init_tls(ss, b, s) == 0);
	sock_stamp_arrivals(ss);
}

static void test_tls(void)
{
	struct tls *st = server("server.pem", "h2,http/1.1");
	struct tls *ct = client("ca.pem");
	struct sock cs, ss;
	enum sock_rc rc, rs;
	char buf[64];
	size_t n;
	tls_pair(st, ct, "localhost", "http/1.1", &cs, &ss);
	/* Nothing has been sent yet: the server waits to read. */
	CHECK_EQ_INT(ss.ops->handshake(&ss), SOCK_AGAIN);
	CHECK_EQ_INT(ss.want, EPOLLIN);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rc, SOCK_OK);
	CHECK_EQ_INT(rs, SOCK_OK);
	CHECK(strcmp(tls_version(ss.ssl), "TLSv1.3") == 0);
	const unsigned char *p;
	unsigned len;
	tls_alpn_chosen(ss.ssl, &p, &len);
	CHECK(len == 8 && memcmp(p, "http/1.1", 8) == 0);
	tls_alpn_chosen(cs.ssl, &p, &len);
	CHECK(len == 8 && memcmp(p, "http/1.1", 8) == 0);

	await_stamps(&cs, &ss);
	int64_t before = clock_ns(CLOCK_REALTIME);
	CHECK_EQ_INT(write_n(&cs, "ping", 4), SOCK_OK);
	wait_in(ss.fd);
	CHECK_EQ_INT(ss.ops->read(&ss, buf, sizeof(buf), &n), SOCK_OK);
	CHECK_EQ_INT(n, 4);
	CHECK(memcmp(buf, "ping", 4) == 0);
	/* One record, read ahead in full: the socket is known to be empty. */
	CHECK_EQ_INT(ss.want, EPOLLIN);
	CHECK(ss.rx_ns >= before - 1000000 && ss.rx_ns <= clock_ns(CLOCK_REALTIME));
	CHECK_EQ_INT(write_n(&ss, "pong", 4), SOCK_OK);
	CHECK_EQ_INT(read_n(&cs, buf, 4), SOCK_OK);
	CHECK(memcmp(buf, "pong", 4) == 0);
	CHECK_EQ_INT(ss.ops->read(&ss, buf, sizeof(buf), &n), SOCK_AGAIN);
	CHECK_EQ_INT(ss.want, EPOLLIN);

	/* close_notify and FIN: the end of the stream, and the other
	 * direction still works. */
	CHECK_EQ_INT(cs.ops->shutdown(&cs), SOCK_OK);
	CHECK_EQ_INT(read_n(&ss, buf, 1), SOCK_EOF);
	CHECK_EQ_INT(write_n(&ss, "late", 4), SOCK_OK);
	CHECK_EQ_INT(read_n(&cs, buf, 4), SOCK_OK);
	CHECK(memcmp(buf, "late", 4) == 0);
	cs.ops->close(&cs, false);
	/* A peer gone without close_notify is an end of stream too. */
	CHECK_EQ_INT(read_n(&ss, buf, 1), SOCK_EOF);
	ss.ops->close(&ss, false);

	/* An IP literal is checked against the certificate's addresses. */
	tls_pair(st, ct, "127.0.0.1", NULL, &cs, &ss);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rc, SOCK_OK);
	CHECK_EQ_INT(rs, SOCK_OK);
	tls_alpn_chosen(ss.ssl, &p, &len);
	CHECK_EQ_INT(len, 0);
	cs.ops->close(&cs, false);
	ss.ops->close(&ss, false);
	tls_free(st);
	tls_free(ct);
}

/* The client's verdict on the server's certificate pem. */
static void expect_client_fail(const char *pem, const char *ca,
			       const char *host, enum sock_fail want)
{
	struct tls *st = server(pem, NULL);
	struct tls *ct = client(ca);
	struct sock cs, ss;
	enum sock_rc rc, rs;
	tls_pair(st, ct, host, NULL, &cs, &ss);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rc, SOCK_ERROR);
	CHECK_EQ_INT(cs.fail, want);
	if (cs.fail != want)
		fprintf(stderr, "  %s for %s: %s\n", pem, host,
			sock_fail_name(cs.fail));
	/* The server hears about it as an alert. */
	CHECK_EQ_INT(rs, SOCK_ERROR);
	CHECK_EQ_INT(ss.fail, SOCK_FAIL_peer_alert);
	cs.ops->close(&cs, false);
	ss.ops->close(&ss, false);
	tls_free(st);
	tls_free(ct);
}

/* What the server makes of raw bytes instead of a ClientHello. */
static enum sock_fail garbage(const char *bytes, size_t len)
{
	struct tls *st = server("server.pem", NULL);
	int a, b;
	struct sock ss;
	tcp_pair(&a, &b);
	CHECK(sock_init_tls(&ss, b, tls_accept(st)) == 0);
	CHECK_EQ_INT(write(a, bytes, len), (ssize_t)len);
	enum sock_rc rc = SOCK_AGAIN;
	for (int i = 0; i < 100 && rc == SOCK_AGAIN; i++) {
		wait_in(b);
		rc = ss.ops->handshake(&ss);
	}
	CHECK_EQ_INT(rc, SOCK_ERROR);
	enum sock_fail f = ss.fail;
	ss.ops->close(&ss, false);
	close(a);
	tls_free(st);
	return f;
}

static void test_tls_failures(void)
{
	expect_client_fail("rogue.pem", "ca.pem", "localhost",
			   SOCK_FAIL_cert_verify);
	expect_client_fail("expired.pem", "ca.pem", "localhost",
			   SOCK_FAIL_cert_expired);
	expect_client_fail("wrongname.pem", "ca.pem", "localhost",
			   SOCK_FAIL_cert_verify);

	static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	CHECK_EQ_INT(garbage(http, sizeof(http) - 1), SOCK_FAIL_not_tls);
	char junk[200];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 37 + 11);
	CHECK_EQ_INT(garbage(junk, sizeof(junk)), SOCK_FAIL_not_tls);

	/* The client goes away in the middle of the handshake. */
	struct tls *st = server("server.pem", NULL);
	int a, b;
	struct sock ss;
	tcp_pair(&a, &b);
	CHECK(sock_init_tls(&ss, b, tls_accept(st)) == 0);
	CHECK_EQ_INT(ss.ops->handshake(&ss), SOCK_AGAIN);
	close(a);
	wait_in(b);
	CHECK_EQ_INT(ss.ops->handshake(&ss), SOCK_ERROR);
	CHECK_EQ_INT(ss.fail, SOCK_FAIL_eof);
	ss.ops->close(&ss, false);

	/* A client that stops at TLS 1.1. */
	struct tls *old = client("ca.pem");
	SSL_CTX_set_security_level(old->ctx, 0);
	SSL_CTX_set_min_proto_version(old->ctx, TLS1_VERSION);
	SSL_CTX_set_max_proto_version(old->ctx, TLS1_1_VERSION);
	struct sock cs;
	enum sock_rc rc, rs;
	tls_pair(st, old, "localhost", NULL, &cs, &ss);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rs, SOCK_ERROR);
	CHECK_EQ_INT(ss.fail, SOCK_FAIL_version);
	CHECK_EQ_INT(rc, SOCK_ERROR);
	cs.ops->close(&cs, false);
	ss.ops->close(&ss, false);
	tls_free(old);
	tls_free(st);

	/* After the handshake the same bytes are a protocol error: the peer
	 * did speak TLS, and handshakes that failed are counted apart. */
	struct tls *ct = client("ca.pem");
	st = server("server.pem", NULL);
	tls_pair(st, ct, "localhost", NULL, &cs, &ss);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rs, SOCK_OK);
	CHECK_EQ_INT(write(cs.fd, http, sizeof(http) - 1), (ssize_t)sizeof(http) - 1);
	char buf[64];
	CHECK_EQ_INT(read_n(&ss, buf, 1), SOCK_ERROR);
	CHECK_EQ_INT(ss.fail, SOCK_FAIL_protocol);
	cs.ops->close(&cs, false);
	ss.ops->close(&ss, false);
	tls_free(ct);
	tls_free(st);

	/* A peer that sent close_notify and went away: writing to it fails
	 * as a reset, not as the end of a stream only reads have. */
	ct = client("ca.pem");
	st = server("server.pem", NULL);
	tls_pair(st, ct, "localhost", NULL, &cs, &ss);
	handshake(&cs, &ss, &rc, &rs);
	CHECK_EQ_INT(rs, SOCK_OK);
	CHECK_EQ_INT(cs.ops->shutdown(&cs), SOCK_OK);
	cs.ops->close(&cs, false);
	CHECK_EQ_INT(read_n(&ss, buf, 1), SOCK_EOF);
	size_t n;
	for (int i = 0; i < 100 && rs == SOCK_OK; i++) {
		rs = ss.ops->write(&ss, "late", 4, &n);
		wait_in(ss.fd);	/* the reset */
	}
	CHECK_EQ_INT(rs, SOCK_ERROR);
	CHECK_EQ_INT(ss.fail, SOCK_FAIL_reset);
	ss.ops->close(&ss, false);
	tls_free(ct);
	tls_free(st);

	CHECK(strcmp(sock_fail_name(SOCK_FAIL_not_tls), "not_tls") == 0);
	CHECK(strstr(sock_fail_help(SOCK_FAIL_timeout), "in time") != NULL);
}

int main(void)
{
	certs_make("sock");
	test_plain();
	test_plain_full();
	test_tls();
	test_tls_failures();
	certs_remove();
	return check_done();
}
