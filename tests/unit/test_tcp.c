/* Unit tests for server/tcp: a private loop relays between client and
 * upstream sockets the test holds itself, all on loopback and one thread
 * (the test runs the loop between its own steps): bytes both ways,
 * latency (from the kernel receive time or the read), half-close, a client that never reads (bounded, then closed as
 * stalled, with the loop quiet meanwhile), idle, upstream reset, refused and
 * unanswered connects, the connection limit, a drain (no new connections,
 * open ones go on), running out of descriptors,
 * TLS termination (good, garbage, stalled handshake), TLS origination
 * (verified, expired certificate), the last bytes arriving together
 * with the FIN (plain and TLS, with and without close_notify, each way),
 * the first-byte deadline and the limit per source, and a reset after a
 * FIN. */
#include "check.h"
#include "certs.h"
#include "../../server/tcp.h"
#include "../../server/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hist.h"

static struct loop loop;
static struct tcp_loop t;
static struct hist lat, wake;
static int relay_port;
static int up_l = -1;		/* the upstream's listening socket */

static void rec(void *arg, enum tcp_latency what, int64_t us)
{
	(void)arg;
	hist_record(what == TCP_LAT_WAKE ? &wake : &lat, us);
}

static int port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	return ntohs(sa.sin_port);
}

/* A loopback listener with the given backlog. */
static int listener(int backlog)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, backlog) < 0) {
		perror("listener");
		exit(1);
	}
	return fd;
}

static void defaults(struct tcp_settings *s, int port)
{
	char why[200], text[64];
	memset(s, 0, sizeof(*s));
	snprintf(text, sizeof(text), "tcp://127.0.0.1:%d", port);
	if (addr_parse(&s->upstream, text, 0, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s\n", why);
		exit(1);
	}
	s->buffer = 4096;
	s->max_conns = 100;
	s->handshake_ms = 5000;
	s->connect_ms = 5000;
	s->idle_ms = 60000;
	s->kernel_stamps = true;
}

/* The defaults, relaying to a fresh upstream listener (up_l). */
static void defaults_fresh(struct tcp_settings *s)
{
	up_l = listener(16);
	defaults(s, port_of(up_l));
}

/* A fresh loop relaying to a fresh upstream listener, with a listener
 * (TLS with tls when not NULL) of id 7. s may adjust the defaults. */
static void setup(struct tcp_settings *s, struct tls *tls)
{
	char err[256], why[200];
	struct addr a;
	CHECK(loop_init(&loop) == 0);
	hist_reset(&lat);
	hist_reset(&wake);
	s->server_tls = tls;
	tcp_loop_init(&t, &loop, s, rec, NULL);
	CHECK(addr_parse(&a, "tcp://127.0.0.1:0", ADDR_ALLOW_PORT0, why,
			 sizeof(why)) == 0);
	int fd = tcp_open_listener(&a, err, sizeof(err));
	CHECK(fd >= 0);
	relay_port = port_of(fd);
	CHECK(tcp_add_listener(&t, 7, fd, tls != NULL) == 0);
	CHECK_EQ_INT(tcp_listener_slot(&t, 7), 0);
}

static void teardown(void)
{
	tcp_loop_free(&t);
	loop_free(&loop);
	if (up_l >= 0)
		close(up_l);
	up_l = -1;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run the loop (and its tick) for ms; returns the epoll events seen. */
static int spin(int ms)
{
	int events = 0;
	int64_t end = mono_ms() + ms;
	do {
		int n = loop_run_once(&loop, 1);
		events += n > 0 ? n : 0;
		tcp_tick(&t);
	} while (mono_ms() < end);
	return events;
}

/* A client connected to the relay (the kernel completes the handshake;
 * the relay accepts when its loop runs). */
static int client(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(relay_port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect to relay");
		exit(1);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* The relay's connection to the upstream, as the upstream accepts it. */
static int up_accept(void)
{
	for (int i = 0; i < 500; i++) {
		int fd = accept4(up_l, NULL, NULL, SOCK_NONBLOCK);
		if (fd >= 0)
			return fd;
		spin(2);
	}
	return -1;
}

/* Receive exactly len bytes on fd while the loop runs. Returns the count,
 * 0 at end of stream, -errno on error. */
static int recv_n(int fd, char *buf, int len)
{
	int got = 0;
	for (int i = 0; i < 1000 && got < len; i++) {
		ssize_t r = recv(fd, buf + got, (size_t)(len - got), MSG_DONTWAIT);
		if (r > 0)
			got += (int)r;
		else if (r == 0)
			return got;
		else if (errno != EAGAIN)
			return -errno;
		else
			spin(2);
	}
	return got;
}

/* Wait for the end of fd's stream: 0 (FIN), -ECONNRESET, or 1 (timeout). */
static int wait_end(int fd)
{
	char c;
	for (int i = 0; i < 1000; i++) {
		ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
		if (r == 0)
			return 0;
		if (r < 0 && errno != EAGAIN)
			return -errno;
		spin(2);
	}
	return 1;
}

static uint64_t lc(enum tcp_lcounter c) { return t.stats.l[0][c]; }
static uint64_t closed(enum tcp_close c) { return t.stats.closed[0][c]; }

static void test_relay(void)
{
	struct tcp_settings s;
	char buf[64];
	defaults_fresh(&s);
	setup(&s, NULL);
	int c = client();
	int u = up_accept();
	CHECK(u >= 0);
	CHECK_EQ_INT(send(c, "hello", 5, 0), 5);
	CHECK_EQ_INT(recv_n(u, buf, 5), 5);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ_INT(send(u, "world!", 6, 0), 6);
	CHECK_EQ_INT(recv_n(c, buf, 6), 6);
	CHECK(memcmp(buf, "world!", 6) == 0);
	/* One burst each way, each timed from its kernel receive time. */
	CHECK_EQ_INT(hist_count(&lat), 2);
	CHECK(hist_max(&lat) < 1000000);
	CHECK_EQ_INT(lc(TCP_L_accepted), 1);
	CHECK_EQ_INT(lc(TCP_L_rx_bytes), 5);
	CHECK_EQ_INT(lc(TCP_L_tx_bytes), 6);
	CHECK_EQ_INT(t.stats.u[TCP_U_connects], 1);
	CHECK_EQ_INT(t.stats.u[TCP_U_connected], 1);
	CHECK_EQ_INT(t.stats.u[TCP_U_tx_bytes], 5);
	CHECK_EQ_INT(t.stats.u[TCP_U_rx_bytes], 6);
	CHECK_EQ_INT(t.stats.active[0], 1);

	/* Half-close: the client is done sending, the upstream is not. */
	CHECK(shutdown(c, SHUT_WR) == 0);
	CHECK_EQ_INT(wait_end(u), 0);
	CHECK_EQ_INT(send(u, "bye", 3, 0), 3);
	CHECK_EQ_INT(recv_n(c, buf, 3), 3);
	CHECK(memcmp(buf, "bye", 3) == 0);
	CHECK_EQ_INT(t.stats.active[0], 1);
	close(u);
	CHECK_EQ_INT(wait_end(c), 0);
	spin(5);
	CHECK_EQ_INT(closed(TCP_CLOSE_done), 1);
	CHECK_EQ_INT(t.stats.active[0], 0);
	CHECK_EQ_INT(t.nconns, 0);

	struct tcp_totals tot;
	const struct tcp_stats *sp = &t.stats;
	tcp_stats_listener(&tot, &sp, 1, 7);
	CHECK_EQ_INT(tot.l[TCP_L_accepted], 1);
	CHECK_EQ_INT(tot.closed[TCP_CLOSE_done], 1);
	tcp_stats_listener(&tot, &sp, 1, 8);
	CHECK_EQ_INT(tot.l[TCP_L_accepted], 0);

	/* The counts under the names /metrics and /stats give them. */
	struct tcp_label label = { .id = 7, .text = "tcp://127.0.0.1:1" };
	json_t *ls = json_object(), *us = json_object();
	tcp_json(ls, us, &sp, 1, &label, 1, "tcp://127.0.0.1:2");
	json_t *l = json_object_get(ls, "tcp://127.0.0.1:1");
	json_t *up = json_object_get(us, "tcp://127.0.0.1:2");
	CHECK(l && up);
	CHECK_EQ_INT(json_integer_value(json_object_get(l, "accepted")), 1);
	CHECK_EQ_INT(json_integer_value(json_object_get(l, "rx_bytes")), 5);
	CHECK_EQ_INT(json_integer_value(json_object_get(l, "active_connections")), 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(l, "closed"), "done")), 1);
	CHECK(json_object_get(json_object_get(l, "handshake_failures"), "not_tls"));
	CHECK_EQ_INT(json_integer_value(json_object_get(up, "connected")), 1);
	json_decref(ls);
	json_decref(us);
	close(c);
	teardown();
}

/* Where latency starts. Bytes wait 40 ms in the kernel while the loop does
 * not run: timed from their kernel receive time that wait shows, in the
 * burst's latency and on its own as the wake-up's (the kernel turns stamps
 * on lazily, hence a few tries); timed from the read it shows nowhere. */
static void test_stamps(bool kernel)
{
	struct tcp_settings s;
	char buf[4];
	defaults_fresh(&s);
	s.kernel_stamps = kernel;
	setup(&s, NULL);
	int c = client();
	int u = up_accept();
	CHECK(u >= 0);
	int64_t most = 0, woke = 0;
	for (int i = 0; i < (kernel ? 20 : 3) && most < 40000; i++) {
		hist_reset(&lat);
		hist_reset(&wake);
		CHECK_EQ_INT(send(c, "late", 4, 0), 4);
		usleep(40000);
		CHECK_EQ_INT(recv_n(u, buf, 4), 4);
		CHECK_EQ_INT(hist_count(&lat), 1);
		if (hist_max(&lat) > most)
			most = hist_max(&lat);
		if (hist_count(&wake) && hist_max(&wake) > woke)
			woke = hist_max(&wake);
	}
	if (kernel) {
		CHECK(most >= 40000);
		CHECK(woke >= 40000);
	} else {
		CHECK(most < 20000);
		CHECK_EQ_INT(hist_count(&wake), 0);
	}
	close(c);
	close(u);
	teardown();
}

/* A client that never reads: the relay holds at most one buffer of what
 * the upstream sent, stops reading the upstream, sleeps, and closes the
 * connection as stalled at the idle timeout. */
static void test_stalled(void)
{
	struct tcp_settings s;
	static char big[65536];
	defaults_fresh(&s);
	s.idle_ms = 1000;
	setup(&s, NULL);
	int c = client();
	int u = up_accept();
	CHECK(u >= 0);
	uint64_t sent = 0;
	for (int i = 0; i < 2000; i++) {
		ssize_t r = send(u, big, sizeof(big), MSG_DONTWAIT);
		if (r > 0) {
			sent += (uint64_t)r;
			continue;
		}
		spin(1);
		/* Full, and quiet for long enough that a busy host has let
		 * every segment in flight arrive. */
		if (send(u, big, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN &&
		    spin(50) == 0)
			break;
	}
	uint64_t in = t.stats.u[TCP_U_rx_bytes];
	uint64_t out = lc(TCP_L_tx_bytes);
	CHECK(sent > 0 && in <= sent);
	CHECK(in - out <= (uint64_t)s.buffer);
	/* Nothing moves, so nothing wakes the loop. */
	CHECK_EQ_INT(spin(100), 0);
	CHECK_EQ_INT(closed(TCP_CLOSE_stalled), 0);
	spin(1200);
	CHECK_EQ_INT(closed(TCP_CLOSE_stalled), 1);
	CHECK_EQ_INT(t.stats.active[0], 0);
	/* What could not be delivered is not passed off as a clean end. */
	CHECK_EQ_INT(wait_end(u), -ECONNRESET);
	close(u);
	close(c);
	teardown();
}

static void test_idle(void)
{
	struct tcp_settings s;
	defaults_fresh(&s);
	s.idle_ms = 600;
	setup(&s, NULL);
	int c = client();
	int u = up_accept();
	CHECK(u >= 0);
	spin(100);
	CHECK_EQ_INT(closed(TCP_CLOSE_idle), 0);
	CHECK_EQ_INT(wait_end(c), 0);
	CHECK_EQ_INT(closed(TCP_CLOSE_idle), 1);
	CHECK_EQ_INT(wait_end(u), 0);
	close(u);
	close(c);
	teardown();
}

/* The upstream resets; early: before the loop has seen its connect
 * complete. Either way a reset, passed on to the client as one. */
static void test_upstream_reset(bool early)
{
	struct tcp_settings s;
	defaults_fresh(&s);
	setup(&s, NULL);
	int c = client(), u;
	if (early) {
		for (int i = 0; i < 500 && !t.stats.u[TCP_U_connects]; i++)
			loop_run_once(&loop, 10);
		u = accept4(up_l, NULL, NULL, 0);
	} else {
		u = up_accept();
	}
	CHECK(u >= 0);
	struct linger lg = { 1, 0 };
	setsockopt(u, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(u);
	CHECK_EQ_INT(wait_end(c), -ECONNRESET);
	CHECK_EQ_INT(closed(TCP_CLOSE_upstream_reset), 1);
	CHECK_EQ_INT(closed(TCP_CLOSE_connect_failed), 0);
	close(c);
	teardown();
}

/* A peer that finished its stream (FIN) and then resets: nothing reads
 * from it again and nothing waits to be written to it, yet the other
 * peer must hear of the reset at once, not at the idle timeout. */
static void test_reset_after_fin(bool from_client)
{
	struct tcp_settings s;
	char buf[8];
	defaults_fresh(&s);
	setup(&s, NULL);
	int c = client(), u = up_accept();
	CHECK(u >= 0);
	int gone = from_client ? c : u, other = from_client ? u : c;
	CHECK(send(gone, "req", 3, 0) == 3);
	shutdown(gone, SHUT_WR);
	CHECK_EQ_INT(recv_n(other, buf, sizeof(buf)), 3);
	CHECK_EQ_INT(wait_end(other), 0);
	struct linger lg = { 1, 0 };
	setsockopt(gone, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(gone);
	/* Its stream ended: the reset shows as the socket's error (EPIPE
	 * once our own FIN was in, CLOSE_WAIT). */
	int err = 0;
	for (int i = 0; i < 1000 && !err; i++) {
		socklen_t len = sizeof(err);
		spin(2);
		getsockopt(other, SOL_SOCKET, SO_ERROR, &err, &len);
	}
	CHECK(err == ECONNRESET || err == EPIPE);
	CHECK_EQ_INT(closed(from_client ? TCP_CLOSE_client_reset :
			    TCP_CLOSE_upstream_reset), 1);
	close(other);
	teardown();
}

static void test_connect_refused(void)
{
	struct tcp_settings s;
	int gone = listener(1);
	defaults(&s, port_of(gone));
	close(gone);
	setup(&s, NULL);
	int c = client();
	CHECK_EQ_INT(wait_end(c), 0);
	CHECK_EQ_INT(closed(TCP_CLOSE_connect_failed), 1);
	CHECK_EQ_INT(t.stats.u[TCP_U_connected], 0);
	close(c);
	teardown();
}

static void test_connect_timeout(void)
{
	struct tcp_settings s;
	/* A listener whose queue is full drops further SYNs: connecting to
	 * it hangs, as to a host that is down. */
	up_l = listener(0);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port_of(up_l)) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fill[3];
	for (int i = 0; i < 3; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&sa, sizeof(sa));
	}
	defaults(&s, port_of(up_l));
	s.connect_ms = 600;
	setup(&s, NULL);
	int c = client();
	spin(100);
	CHECK_EQ_INT(closed(TCP_CLOSE_connect_timeout), 0);
	CHECK_EQ_INT(wait_end(c), 0);
	CHECK_EQ_INT(closed(TCP_CLOSE_connect_timeout), 1);
	for (int i = 0; i < 3; i++)
		close(fill[i]);
	close(c);
	teardown();
}

static void test_limit(void)
{
	struct tcp_settings s;
	defaults_fresh(&s);
	s.max_conns = 2;
	setup(&s, NULL);
	int c[3], u[3];
	for (int i = 0; i < 3; i++)
		c[i] = client();
	u[0] = up_accept();
	u[1] = up_accept();
	spin(20);
	CHECK_EQ_INT(lc(TCP_L_accepted), 2);
	CHECK_EQ_INT(lc(TCP_L_paused_limit), 1);
	/* Paused, the waiting client wakes nothing. */
	CHECK_EQ_INT(spin(50), 0);
	/* One goes: the third is taken. */
	struct linger lg = { 1, 0 };
	setsockopt(c[0], SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(c[0]);
	u[2] = up_accept();
	CHECK(u[2] >= 0);
	CHECK_EQ_INT(lc(TCP_L_accepted), 3);
	CHECK_EQ_INT(closed(TCP_CLOSE_client_reset), 1);
	CHECK_EQ_INT(send(c[2], "3", 1, 0), 1);
	char b;
	CHECK_EQ_INT(recv_n(u[2], &b, 1), 1);
	for (int i = 0; i < 3; i++) {
		if (i)
			close(c[i]);
		close(u[i]);
	}
	teardown();
}

/* A drain: no new connections, the open one goes on to its end. */
static void test_stop_listening(void)
{
	struct tcp_settings s;
	char buf[8];
	defaults_fresh(&s);
	setup(&s, NULL);
	int c = client();
	int u = up_accept();
	CHECK(u >= 0);
	tcp_stop_listening(&t);
	CHECK_EQ_INT(tcp_listener_slot(&t, 7), -1);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(relay_port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int late = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(connect(late, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
	      errno == ECONNREFUSED);
	close(late);
	CHECK_EQ_INT(send(c, "still", 5, 0), 5);
	CHECK_EQ_INT(recv_n(u, buf, 5), 5);
	CHECK_EQ_INT(t.nconns, 1);
	close(c);
	close(u);
	spin(20);
	CHECK_EQ_INT(t.nconns, 0);
	CHECK_EQ_INT(closed(TCP_CLOSE_done), 1);
	teardown();
}

static void test_no_fds(void)
{
	struct tcp_settings s;
	defaults_fresh(&s);
	setup(&s, NULL);
	struct rlimit old, low;
	getrlimit(RLIMIT_NOFILE, &old);
	int c = socket(AF_INET, SOCK_STREAM, 0);
	/* No descriptor left for the relay's accept. */
	int next = dup(0);
	close(next);
	low = old;
	low.rlim_cur = (rlim_t)next;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(relay_port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
	CHECK(connect(c, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	int events = spin(50);
	CHECK_EQ_INT(lc(TCP_L_paused_no_fd), 1);
	CHECK_EQ_INT(lc(TCP_L_accepted), 0);
	/* Paused, not spinning: the one event was the connection. */
	CHECK(events <= 1);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	/* After the back-off it accepts again. */
	int u = up_accept();
	CHECK(u >= 0);
	CHECK_EQ_INT(lc(TCP_L_accepted), 1);
	close(u);
	close(c);
	teardown();
}

static struct tls *server_tls(const char *pem)
{
	char warn[1024], err[1024];
	struct tls *x = tls_server_new(cert(pem), cert("server.key"), NULL,
				       warn, sizeof(warn), err, sizeof(err));
	if (!x) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return x;
}

static struct tls *client_tls(void)
{
	char err[1024];
	struct tls *x = tls_client_new(cert("ca.pem"), err, sizeof(err));
	if (!x) {
		fprintf(stderr, "%s\n", err);
		exit(1);
	}
	return x;
}

/* Drive s's handshake while the loop runs. */
static enum sock_rc handshake(struct sock *s)
{
	enum sock_rc rc = SOCK_AGAIN;
	for (int i = 0; i < 500 && rc == SOCK_AGAIN; i++) {
		rc = s->ops->handshake(s);
		if (rc == SOCK_AGAIN)
			spin(2);
	}
	return rc;
}

static enum sock_rc sock_recv_n(struct sock *s, char *buf, size_t len)
{
	size_t got = 0, n;
	for (int i = 0; i < 500 && got < len; i++) {
		enum sock_rc rc = s->ops->read(s, buf + got, len - got, &n);
		if (rc == SOCK_OK)
			got += n;
		else if (rc == SOCK_AGAIN)
			spin(2);
		else
			return rc;
	}
	return got == len ? SOCK_OK : SOCK_AGAIN;
}

static void test_tls_termination(void)
{
	struct tcp_settings s;
	struct tls *st = server_tls("server.pem"), *ct = client_tls();
	char buf[16];
	size_t n;
	defaults_fresh(&s);
	s.handshake_ms = 600;
	setup(&s, st);

	struct sock cs;
	CHECK(sock_init_tls(&cs, client(), tls_connect(ct, "localhost", NULL, 0)) == 0);
	CHECK_EQ_INT(handshake(&cs), SOCK_OK);
	int u = up_accept();
	CHECK(u >= 0);
	CHECK_EQ_INT(cs.ops->write(&cs, "ping", 4, &n), SOCK_OK);
	CHECK_EQ_INT(recv_n(u, buf, 4), 4);
	CHECK(memcmp(buf, "ping", 4) == 0);
	CHECK_EQ_INT(send(u, "pong", 4, 0), 4);
	CHECK_EQ_INT(sock_recv_n(&cs, buf, 4), SOCK_OK);
	CHECK(memcmp(buf, "pong", 4) == 0);
	CHECK_EQ_INT(hist_count(&lat), 2);
	/* close_notify and FIN from the client: a FIN to the upstream. */
	CHECK_EQ_INT(cs.ops->shutdown(&cs), SOCK_OK);
	CHECK_EQ_INT(wait_end(u), 0);
	close(u);
	CHECK_EQ_INT(sock_recv_n(&cs, buf, 1), SOCK_EOF);
	spin(5);
	CHECK_EQ_INT(closed(TCP_CLOSE_done), 1);
	cs.ops->close(&cs, false);

	/* Garbage instead of a ClientHello: counted by reason, closed. */
	int c = client();
	static const char http[] = "GET / HTTP/1.1\r\n\r\n";
	CHECK_EQ_INT(send(c, http, sizeof(http) - 1, 0), (ssize_t)sizeof(http) - 1);
	int end = wait_end(c);
	CHECK(end == 0 || end == -ECONNRESET);
	CHECK_EQ_INT(t.stats.hs_failed[0][SOCK_FAIL_not_tls], 1);
	close(c);

	/* A handshake that never comes: closed at the deadline, and the
	 * loop went on serving meanwhile. */
	c = client();
	spin(50);
	CHECK_EQ_INT(t.stats.hs_failed[0][SOCK_FAIL_timeout], 0);
	CHECK_EQ_INT(wait_end(c), 0);
	CHECK_EQ_INT(t.stats.hs_failed[0][SOCK_FAIL_timeout], 1);
	CHECK_EQ_INT(closed(TCP_CLOSE_handshake), 2);
	CHECK_EQ_INT(t.stats.u[TCP_U_connects], 1);
	close(c);
	teardown();
	tls_free(st);
	tls_free(ct);
}

/* The relay originates TLS; the test is the upstream TLS server. */
static enum sock_rc originate(const char *pem, struct sock *us, int *c)
{
	struct tcp_settings s;
	struct tls *ct = client_tls();
	defaults_fresh(&s);
	s.upstream.kind = ADDR_TLS;
	s.upstream_tls = ct;
	snprintf(s.upstream_host, sizeof(s.upstream_host), "localhost");
	setup(&s, NULL);
	*c = client();
	int u = up_accept();
	CHECK(u >= 0);
	struct tls *st = server_tls(pem);
	CHECK(sock_init_tls(us, u, tls_accept(st)) == 0);
	enum sock_rc rc = handshake(us);
	tls_free(st);
	return rc;
}

static void test_tls_origination(void)
{
	struct sock us;
	int c;
	char buf[8];
	size_t n;
	CHECK_EQ_INT(originate("server.pem", &us, &c), SOCK_OK);
	CHECK_EQ_INT(send(c, "up", 2, 0), 2);
	CHECK_EQ_INT(sock_recv_n(&us, buf, 2), SOCK_OK);
	CHECK(memcmp(buf, "up", 2) == 0);
	CHECK_EQ_INT(us.ops->write(&us, "down", 4, &n), SOCK_OK);
	CHECK_EQ_INT(recv_n(c, buf, 4), 4);
	CHECK(memcmp(buf, "down", 4) == 0);
	CHECK_EQ_INT(t.stats.u[TCP_U_connected], 1);
	us.ops->close(&us, false);
	close(c);
	struct tls *ct = t.set.upstream_tls;
	teardown();
	tls_free(ct);

	/* An upstream with an expired certificate is refused and counted. */
	CHECK_EQ_INT(originate("expired.pem", &us, &c), SOCK_ERROR);
	CHECK_EQ_INT(wait_end(c), 0);
	CHECK_EQ_INT(t.stats.u_hs_failed[SOCK_FAIL_cert_expired], 1);
	CHECK_EQ_INT(closed(TCP_CLOSE_upstream_tls), 1);
	CHECK_EQ_INT(t.stats.u[TCP_U_connected], 0);
	us.ops->close(&us, false);
	close(c);
	ct = t.set.upstream_tls;
	teardown();
	tls_free(ct);
}

/* Send 100 bytes and the end of the stream back to back through end e:
 * close_notify and FIN when notify, the FIN alone otherwise (TLS peers
 * that just close). */
static void data_then_fin(struct sock *e, bool notify)
{
	static const char hundred[100] = "the last bytes";
	size_t n;
	CHECK_EQ_INT(e->ops->write(e, hundred, sizeof(hundred), &n), SOCK_OK);
	CHECK_EQ_INT(n, sizeof(hundred));
	if (notify)
		CHECK_EQ_INT(e->ops->shutdown(e), SOCK_OK);
	else
		CHECK(shutdown(e->fd, SHUT_WR) == 0);
}

/* Read through e while the loop runs until its stream ends. Returns the
 * bytes read before the end, -1 if it did not end within 2 s or failed. */
static int read_to_end(struct sock *e)
{
	char buf[256];
	int got = 0;
	size_t n;
	for (int i = 0; i < 1000; i++) {
		enum sock_rc rc = e->ops->read(e, buf, sizeof(buf), &n);
		if (rc == SOCK_OK)
			got += (int)n;
		else if (rc == SOCK_EOF)
			return got;
		else if (rc == SOCK_ERROR)
			return -1;
		else
			spin(2);
	}
	return -1;
}

/* The last bytes and the FIN together, as request-then-close clients and
 * close-after-reply servers send them, each way in turn (the client
 * first, then the upstream first). Edge-triggered epoll raises one event
 * for both when they arrive together: the relay must not take the short
 * read of the data for an empty socket. The loop does not run while they
 * are sent, so both are queued when it wakes; the idle timeout is a
 * minute, so an end that arrives at all arrived on time. tls: the client
 * speaks TLS to the relay (else the relay speaks TLS to the upstream when
 * tls_up); notify: the TLS end sends close_notify before its FIN. */
static void test_fin_with_data(bool tls, bool tls_up, bool notify)
{
	struct tcp_settings s;
	struct tls *st = server_tls("server.pem"), *ct = client_tls();
	for (int upstream_first = 0; upstream_first < 2; upstream_first++) {
		struct sock cs, us;
		defaults_fresh(&s);
		if (tls_up) {
			s.upstream.kind = ADDR_TLS;
			s.upstream_tls = ct;
			snprintf(s.upstream_host, sizeof(s.upstream_host),
				 "localhost");
		}
		setup(&s, tls ? st : NULL);
		if (tls) {
			CHECK(sock_init_tls(&cs, client(), tls_connect(ct,
					"localhost", NULL, 0)) == 0);
			CHECK_EQ_INT(handshake(&cs), SOCK_OK);
		} else {
			sock_init_plain(&cs, client());
		}
		int u = up_accept();
		CHECK(u >= 0);
		if (tls_up) {
			CHECK(sock_init_tls(&us, u, tls_accept(st)) == 0);
			CHECK_EQ_INT(handshake(&us), SOCK_OK);
		} else {
			sock_init_plain(&us, u);
		}
		spin(5);
		struct sock *first = upstream_first ? &us : &cs;
		struct sock *second = upstream_first ? &cs : &us;
		data_then_fin(first, notify);
		CHECK_EQ_INT(read_to_end(second), 100);
		CHECK_EQ_INT(t.nconns, 1);
		data_then_fin(second, notify);
		CHECK_EQ_INT(read_to_end(first), 100);
		spin(5);
		CHECK_EQ_INT(closed(TCP_CLOSE_done), 1);
		CHECK_EQ_INT(t.nconns, 0);
		cs.ops->close(&cs, false);
		us.ops->close(&us, false);
		teardown();
	}
	tls_free(st);
	tls_free(ct);
}

/* A client connected to the relay from loopback address from. */
static int client_from(const char *from)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(relay_port) };
	struct sockaddr_in me = { .sin_family = AF_INET };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	inet_pton(AF_INET, from, &me.sin_addr);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect to relay");
		exit(1);
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

/* A client that says nothing is closed at the first-byte deadline, counted
 * from its accept, even while the upstream talks to it; one that said a
 * byte in time is not, and then only the idle timeout applies. Under TLS
 * the handshake is no first byte. */
static void test_first_byte(void)
{
	struct tcp_settings s;
	struct tls *st = server_tls("server.pem"), *ct = client_tls();
	char buf[8];
	defaults_fresh(&s);
	s.first_byte_ms = 400;
	setup(&s, NULL);
	int quiet = client(), talker = client();
	int uq = up_accept(), ut = up_accept();
	CHECK(uq >= 0 && ut >= 0);
	int64_t t0 = mono_ms();
	CHECK_EQ_INT(send(uq, "banner", 6, 0), 6);
	CHECK_EQ_INT(recv_n(quiet, buf, 6), 6);
	CHECK_EQ_INT(send(talker, "x", 1, 0), 1);
	CHECK_EQ_INT(wait_end(quiet), 0);
	int64_t took = mono_ms() - t0;
	CHECK(took >= 350);
	CHECK_EQ_INT(closed(TCP_CLOSE_silent), 1);
	CHECK_EQ_INT(wait_end(uq), 0);
	/* The talker outlives the deadline by far. */
	spin(600);
	CHECK_EQ_INT(t.nconns, 1);
	CHECK_EQ_INT(closed(TCP_CLOSE_silent), 1);
	CHECK_EQ_INT(recv_n(ut, buf, 1), 1);
	close(quiet);
	close(uq);
	close(talker);
	close(ut);
	teardown();

	defaults_fresh(&s);
	s.first_byte_ms = 400;
	setup(&s, st);
	struct sock cs;
	CHECK(sock_init_tls(&cs, client(), tls_connect(ct, "localhost", NULL,
						       0)) == 0);
	CHECK_EQ_INT(handshake(&cs), SOCK_OK);
	int u = up_accept();
	CHECK(u >= 0);
	CHECK_EQ_INT(sock_recv_n(&cs, buf, 1), SOCK_EOF);
	CHECK_EQ_INT(closed(TCP_CLOSE_silent), 1);
	cs.ops->close(&cs, false);
	close(u);
	teardown();
	tls_free(st);
	tls_free(ct);
}

/* One source holds at most max_per_source of the loop's connections; the
 * next is reset at once and counted, others are served meanwhile, and a
 * slot given back is taken again. */
static void test_per_source(void)
{
	struct tcp_settings s;
	char b;
	defaults_fresh(&s);
	s.max_per_source = 2;
	setup(&s, NULL);
	int a1 = client_from("127.0.0.1"), a2 = client_from("127.0.0.1");
	int u1 = up_accept(), u2 = up_accept();
	CHECK(u1 >= 0 && u2 >= 0);
	int a3 = client_from("127.0.0.1");
	CHECK_EQ_INT(wait_end(a3), -ECONNRESET);
	CHECK_EQ_INT(lc(TCP_L_refused_source), 1);
	CHECK_EQ_INT(lc(TCP_L_accepted), 2);
	int other = client_from("127.0.0.2");
	int uo = up_accept();
	CHECK(uo >= 0);
	CHECK_EQ_INT(send(other, "o", 1, 0), 1);
	CHECK_EQ_INT(recv_n(uo, &b, 1), 1);
	close(a1);
	close(u1);
	spin(20);
	int a4 = client_from("127.0.0.1");
	int u4 = up_accept();
	CHECK(u4 >= 0);
	CHECK_EQ_INT(send(a4, "4", 1, 0), 1);
	CHECK_EQ_INT(recv_n(u4, &b, 1), 1);
	CHECK_EQ_INT(lc(TCP_L_refused_source), 1);
	CHECK_EQ_INT(lc(TCP_L_accepted), 4);
	/* A reload that lifts the limit lets the source past it. */
	s.max_per_source = 0;
	s.server_tls = NULL;
	tcp_loop_configure(&t, &s);
	int a5 = client_from("127.0.0.1");
	int u5 = up_accept();
	CHECK(u5 >= 0);
	CHECK_EQ_INT(lc(TCP_L_accepted), 5);
	int fds[] = { a2, u2, a3, other, uo, a4, u4, a5, u5 };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close(fds[i]);
	teardown();
}

int main(void)
{
	certs_make("tcp");
	hist_init_us(&lat);
	hist_init_us(&wake);
	test_relay();
	test_stamps(true);
	test_stamps(false);
	test_stalled();
	test_idle();
	test_upstream_reset(false);
	test_upstream_reset(true);
	test_reset_after_fin(true);
	test_reset_after_fin(false);
	test_connect_refused();
	test_connect_timeout();
	test_limit();
	test_stop_listening();
	test_no_fds();
	test_tls_termination();
	test_tls_origination();
	test_fin_with_data(false, false, false);
	test_fin_with_data(true, false, false);
	test_fin_with_data(true, false, true);
	test_fin_with_data(false, true, false);
	test_fin_with_data(false, true, true);
	test_first_byte();
	test_per_source();
	hist_free(&lat);
	hist_free(&wake);
	certs_remove();
	return check_done();
}
