/*
 * relay_blast: the traffic ends of bench/relay_pps.sh, built by it. A
 * sender faster than the relays it measures (several threads, each its own
 * socket and flow, sendmmsg batches), a counting sink, an echo server and a
 * ping-pong latency client.
 *
 *   relay_blast send HOST PORT SECONDS SIZE THREADS [SEGMENTS [RATE]]
 *                                                     prints datagrams sent;
 *                                                     SEGMENTS > 1: each
 *                                                     write is a run of that
 *                                                     many (UDP_SEGMENT);
 *                                                     RATE > 0: datagrams
 *                                                     per second in all,
 *                                                     else as fast as it can
 *   relay_blast sink PORT SECONDS WARMUP [gro]        prints datagrams per
 *                                                     second received after
 *                                                     WARMUP seconds; gro:
 *                                                     take runs (UDP_GRO)
 *   relay_blast count PORT SECONDS FILE               a sink that keeps its
 *                                                     running total in FILE
 *   relay_blast echo PORT SECONDS
 *   relay_blast ping HOST PORT COUNT SIZE             prints p50 p99 (us)
 * IPv4 loopback only: numeric addresses.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int udp_socket(const char *host, int port, int bind_it)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "relay_blast: '%s' is not an IPv4 address\n", host);
		exit(64);
	}
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int big = 8 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	int rc = bind_it ? bind(fd, (struct sockaddr *)&sa, sizeof(sa))
			 : connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (fd < 0 || rc < 0) {
		fprintf(stderr, "relay_blast: %s:%d: %s\n", host, port, strerror(errno));
		exit(69);
	}
	return fd;
}

struct sender {
	const char *host;
	int port, size, segments;
	double end;
	double rate;		/* this thread's datagrams per second, 0: flat out */
	uint64_t sent;
};

/* Sleep until t (CLOCK_MONOTONIC seconds). */
static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (double)(time_t)t) * 1e9) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *send_thread(void *arg)
{
	struct sender *s = arg;
	int fd = udp_socket(s->host, s->port, 0);
	size_t len = (size_t)s->size * (size_t)s->segments;
	char *buf = calloc(1, len);
	struct iovec iov = { buf, len };
	/* One segment size for every message of the batch. */
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct cmsghdr *c = &ctl.align;
	uint16_t seg = (uint16_t)s->size;
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(seg));
	memcpy(CMSG_DATA(c), &seg, sizeof(seg));
	struct mmsghdr m[BATCH];
	memset(m, 0, sizeof(m));
	for (int i = 0; i < BATCH; i++) {
		m[i].msg_hdr.msg_iov = &iov;
		m[i].msg_hdr.msg_iovlen = 1;
		if (s->segments > 1) {
			m[i].msg_hdr.msg_control = ctl.buf;
			m[i].msg_hdr.msg_controllen = sizeof(ctl.buf);
		}
	}
	/* Paced: a batch of 8 writes whenever it is due, so the rate holds
	 * on average without a burst of a whole batch at low rates. */
	int per = s->rate > 0 ? 8 : BATCH;
	double due = now_s(), gap = s->rate > 0 ? per * s->segments / s->rate : 0;
	while (now_s() < s->end) {
		/* A full send buffer blocks here: that is the sender's limit. */
		for (int k = 0; k < 16; k++) {
			if (gap > 0) {
				sleep_until(due);
				due += gap;
			}
			int r = sendmmsg(fd, m, (unsigned)per, 0);
			if (r > 0)
				s->sent += (uint64_t)r * (uint64_t)s->segments;
		}
	}
	free(buf);
	close(fd);
	return NULL;
}

static int cmd_send(char **a)
{
	int threads = atoi(a[4]), segments = a[5] ? atoi(a[5]) : 1;
	double rate = a[5] && a[6] ? atof(a[6]) : 0;
	if (threads < 1 || threads > 64 || segments < 1 || segments > 64 ||
	    atoi(a[3]) * segments > 65000)
		return 64;
	struct sender s[64];
	pthread_t t[64];
	double end = now_s() + atof(a[2]);
	for (int i = 0; i < threads; i++) {
		s[i] = (struct sender){ a[0], atoi(a[1]), atoi(a[3]), segments,
					end, rate / threads, 0 };
		pthread_create(&t[i], NULL, send_thread, &s[i]);
	}
	uint64_t total = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(t[i], NULL);
		total += s[i].sent;
	}
	printf("%llu\n", (unsigned long long)total);
	return 0;
}

/* The receive side of a sink: a socket on PORT (runs with gro) and its
 * vectors. */
struct sink {
	int fd;
	bool gro;
	struct iovec iov[BATCH];
	struct mmsghdr m[BATCH];
};

static void sink_open(struct sink *k, int port, bool gro)
{
	static char buf[BATCH][65536];
	k->fd = udp_socket("127.0.0.1", port, 1);
	k->gro = gro;
	struct timeval tv = { 0, 100000 };
	setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	int one = 1;
	if (gro && setsockopt(k->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0) {
		perror("relay_blast: UDP_GRO");
		exit(69);
	}
	memset(k->m, 0, sizeof(k->m));
	for (int i = 0; i < BATCH; i++) {
		k->iov[i] = (struct iovec){ buf[i], sizeof(buf[i]) };
		k->m[i].msg_hdr.msg_iov = &k->iov[i];
		k->m[i].msg_hdr.msg_iovlen = 1;
	}
}

/* Wait up to 100 ms for datagrams; returns how many arrived (a run
 * counts as the datagrams in it). */
static uint64_t sink_read(struct sink *k)
{
	static char ctl[BATCH][CMSG_SPACE(sizeof(int))] __attribute__((aligned(8)));
	for (int i = 0; i < BATCH; i++) {
		k->m[i].msg_hdr.msg_control = ctl[i];
		k->m[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	int r = recvmmsg(k->fd, k->m, BATCH, MSG_WAITFORONE, NULL);
	uint64_t n = 0;
	for (int i = 0; i < r; i++) {
		struct cmsghdr *c = CMSG_FIRSTHDR(&k->m[i].msg_hdr);
		int seg = 0;
		if (k->gro && c && c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO)
			memcpy(&seg, CMSG_DATA(c), sizeof(seg));
		n += seg ? (k->m[i].msg_len + (unsigned)seg - 1) / (unsigned)seg : 1;
	}
	return n;
}

static int cmd_sink(char **a)
{
	struct sink k;
	sink_open(&k, atoi(a[0]), a[3] && strcmp(a[3], "gro") == 0);
	double start = now_s(), warm = start + atof(a[2]), end = start + atof(a[1]);
	uint64_t n = 0;
	double t;
	while ((t = now_s()) < end) {
		uint64_t got = sink_read(&k);
		if (t >= warm)
			n += got;
	}
	printf("%.0f\n", (double)n / (end - warm));
	return 0;
}

/* A sink that keeps the running total in FILE (rewritten every 50 ms), for
 * a caller that measures several steps against one sink. */
static int cmd_count(char **a)
{
	struct sink k;
	sink_open(&k, atoi(a[0]), false);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", a[2]);
	double end = now_s() + atof(a[1]), next = 0, t;
	uint64_t n = 0;
	while ((t = now_s()) < end) {
		n += sink_read(&k);
		if (t < next)
			continue;
		FILE *f = fopen(tmp, "w");
		if (!f || fprintf(f, "%llu\n", (unsigned long long)n) < 0 ||
		    fclose(f) || rename(tmp, a[2])) {
			perror(a[2]);
			return 73;
		}
		next = t + 0.05;
	}
	return 0;
}

static int cmd_echo(char **a)
{
	int fd = udp_socket("127.0.0.1", atoi(a[0]), 1);
	double end = now_s() + atof(a[1]);
	struct timeval tv = { 0, 100000 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char buf[2048];
	while (now_s() < end) {
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);
		ssize_t r = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &len);
		if (r >= 0)
			sendto(fd, buf, (size_t)r, 0, (struct sockaddr *)&peer, len);
	}
	return 0;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static int cmd_ping(char **a)
{
	int fd = udp_socket(a[0], atoi(a[1]), 0);
	int count = atoi(a[2]), size = atoi(a[3]);
	struct timeval tv = { 1, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	double *rtt = calloc((size_t)count, sizeof(*rtt));
	char buf[2048] = { 0 };
	int got = 0;
	for (int i = 0; i < count; i++) {
		double t0 = now_s();
		if (send(fd, buf, (size_t)size, 0) < 0 || recv(fd, buf, sizeof(buf), 0) < 0)
			continue;
		rtt[got++] = (now_s() - t0) * 1e6;
	}
	if (got < count * 9 / 10) {
		fprintf(stderr, "relay_blast: only %d of %d replies\n", got, count);
		return 69;
	}
	qsort(rtt, (size_t)got, sizeof(*rtt), cmp_d);
	printf("%.1f %.1f\n", rtt[got / 2], rtt[got * 99 / 100]);
	free(rtt);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int args; int (*fn)(char **); } cmds[] = {
		{ "send", 5, cmd_send }, { "sink", 3, cmd_sink },
		{ "echo", 2, cmd_echo }, { "ping", 4, cmd_ping },
		{ "count", 3, cmd_count },
	};
	for (size_t i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0 &&
		    (argc == cmds[i].args + 2 ||
		     ((cmds[i].fn == cmd_send || cmds[i].fn == cmd_sink) &&
		      argc == cmds[i].args + 3) ||
		     (cmds[i].fn == cmd_send && argc == cmds[i].args + 4)))
			return cmds[i].fn(argv + 2);
	fprintf(stderr, "usage: relay_blast send HOST PORT SECONDS SIZE THREADS "
		"[SEGMENTS [RATE]] | sink PORT SECONDS WARMUP [gro] | count PORT SECONDS FILE | echo PORT SECONDS | ping HOST PORT COUNT SIZE\n");
	return 64;
}
