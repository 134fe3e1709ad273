/*
 * epoll-unixwake: the inversion of the demo, with the co-tenant waking
 * the RT waiter over AF_UNIX instead of loopback UDP.
 *
 * On loopback the sender runs the waiter's ep_poll_callback() inside its
 * own softirq section, so a sender throttled there also holds its CPU's
 * softirq lock; on Debian's 6.1 RT kernels the timer softirq thread
 * (ktimers/N) needs that lock and boosts the sender out of ep->lock
 * within a tick, fix or no fix (lab/demo/README.md). An AF_UNIX send
 * wakes the waiter from the sender's own context: a sender throttled in
 * the callback holds ep->lock and the socket's wait-queue lock, nothing
 * a timer needs.
 *
 * The waiter (SCHED_FIFO --waiter-prio on --cpu) sits in epoll_wait() on
 * two AF_UNIX datagram sockets and a timerfd (--tick-us). --senders
 * SCHED_OTHER threads, in a cgroup of their own with the quota
 * --quota-us/--period-us (lib/cgroup: v2, or v1 where the host has
 * that), on the same CPU, send to the first socket as fast as they can. An RT pinger (SCHED_FIFO 40 on --ping-cpu)
 * sends its due time to the second socket every --ping-us; the waiter
 * times each from that due time. A watchdog (SCHED_FIFO 95 on
 * --ping-cpu) counts a stall when the waiter makes no progress for
 * --stall-ms, and then lifts the quota (written by a SCHED_FIFO 90
 * thread on --cpu, which also sets it: the bandwidth timer runs on the
 * CPU that writes it); the quota is set again when the waiter moves.
 *
 *   epoll-unixwake [--seconds S] [--senders N] [--quota-us US] [--period-us US]
 *                  [--tick-us US] [--ping-us US] [--stall-ms MS] [--late-ms MS]
 *                  [--cpu N] [--ping-cpu N] [--waiter-prio P]
 *
 * One JSON object on stdout. Exit status: 0 neither a stall nor a ping
 * over --late-ms; 1 some (a finding); 64 bad command line; 71 the system
 * refused a resource (root, a cgroup with the cpu controller, the CPUs
 * named).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"

#define MAX_SENDERS 16
#define MAX_STALLS 4096

/* The flags: name, default, lower and upper bound. */
#define FLAGS(X) \
	X(seconds, 20, 1, 3600) \
	X(senders, 2, 1, MAX_SENDERS) \
	X(quota_us, 1000, 1000, 1000000) \
	X(period_us, 20000, 1000, 1000000) \
	X(tick_us, 1000, 100, 1000000) \
	X(ping_us, 9973, 100, 1000000) \
	X(stall_ms, 50, 2, 10000) \
	X(late_ms, 5, 1, 10000) \
	X(cpu, 1, 0, 1023) \
	X(ping_cpu, 0, 0, 1023) \
	X(waiter_prio, 50, 1, 89)

static struct {
#define FIELD(name, def, lo, hi) long name;
	FLAGS(FIELD)
#undef FIELD
} p = {
#define DEFAULT(name, def, lo, hi) .name = def,
	FLAGS(DEFAULT)
#undef DEFAULT
};

static struct sockaddr_un load_addr, ping_addr;
static socklen_t load_len, ping_len;
static atomic_bool stop;
/* The waiter's progress: the time of its last return from epoll_wait. */
static _Atomic int64_t beat_ns;
/* The quota thread's orders: 'L' lift, 'R' restore, 'Q' quit. */
static int order_pipe[2];
static struct cg cg;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static noreturn void refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("epoll-unixwake: ", stderr);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(errno));
	va_end(ap);
	exit(EX_OSERR);
}

/* Pin the calling thread to CPU, SCHED_FIFO PRIO (0: leave its policy). */
static void place(long cpu, int prio)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		refuse("CPU %ld", cpu);
	struct sched_param sp = { .sched_priority = prio };
	if (prio && pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		refuse("SCHED_FIFO %d", prio);
}

static noreturn void refuse_cg(const char *err)
{
	fprintf(stderr, "epoll-unixwake: %s\n", err);
	exit(EX_OSERR);
}

static void set_quota(bool lifted)
{
	char err[512];
	if (cg_set_quota(&cg, lifted ? -1 : p.quota_us, p.period_us, err, sizeof(err)))
		refuse_cg(err);
}

static int bound_socket(const char *name, struct sockaddr_un *a, socklen_t *len)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* Abstract: nothing left behind in the file system. */
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "relay-unixwake-%d-%s", (int)getpid(), name);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->sun_path + 1));
	if (fd < 0 || bind(fd, (struct sockaddr *)a, *len))
		refuse("AF_UNIX socket %s", name);
	return fd;
}

static void *send_loop(void *arg)
{
	(void)arg;
	char err[512];
	struct sched_param sp = { 0 };
	if (pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp))
		refuse("SCHED_OTHER");
	place(p.cpu, 0);
	if (cg_add_thread(&cg, 0, err, sizeof(err)))
		refuse_cg(err);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	char payload[64] = { 0 };
	/* A full queue (EAGAIN) still burns the quota, which is the point. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		(void)sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *)&load_addr, load_len);
	close(fd);
	return NULL;
}

static void *ping_loop(void *arg)
{
	(void)arg;
	place(p.ping_cpu, 40);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int64_t due = now_ns() + p.ping_us * 1000;
	while (!atomic_load(&stop)) {
		struct timespec ts = { due / 1000000000, due % 1000000000 };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		(void)sendto(fd, &due, sizeof(due), 0, (struct sockaddr *)&ping_addr, ping_len);
		due += p.ping_us * 1000;
	}
	return NULL;
}

static void *quota_loop(void *arg)
{
	(void)arg;
	place(p.cpu, 90);
	set_quota(false);
	char c;
	while (read(order_pipe[0], &c, 1) == 1 && c != 'Q')
		set_quota(c == 'L');
	return NULL;
}

static struct {
	long n, lifted;
	int64_t longest_ns;
} stalls;

static void order(char c)
{
	if (write(order_pipe[1], &c, 1) != 1)
		refuse("the quota thread's pipe");
}

static void *watch_loop(void *arg)
{
	(void)arg;
	place(p.ping_cpu, 95);
	int64_t since = 0;
	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 1000000 };
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		int64_t beat = atomic_load(&beat_ns), t = now_ns();
		if (!since && t - beat > p.stall_ms * 1000000) {
			since = beat;
			stalls.n++;
			order('L');
		} else if (since && beat > since) {
			int64_t len = beat - since;
			if (len > stalls.longest_ns)
				stalls.longest_ns = len;
			stalls.lifted++;
			since = 0;
			order('R');
		}
	}
	if (since)
		order('R');
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static double pct_us(const int64_t *v, long n, double q)
{
	if (!n)
		return 0;
	long k = (long)(q * (double)n + 0.999999) - 1;
	return (double)v[k < 0 ? 0 : k >= n ? n - 1 : k] / 1e3;
}

static int parse(int argc, char **argv)
{
	static const struct option opts[] = {
#define OPT(name, def, lo, hi) { #name, 1, 0, 0 },
		FLAGS(OPT)
#undef OPT
		{ 0 } };
	long *slot[] = {
#define SLOT(name, def, lo, hi) &p.name,
		FLAGS(SLOT)
#undef SLOT
	};
	static const long lo[] = {
#define LO(name, def, l, hi) l,
		FLAGS(LO)
#undef LO
	}, hi[] = {
#define HI(name, def, lo, h) h,
		FLAGS(HI)
#undef HI
	};
	int ch, i;
	/* getopt_long takes "--quota-us" for "quota_us" only by its own
	 * spelling: turn dashes into underscores first. */
	for (int a = 1; a < argc; a++)
		if (!strncmp(argv[a], "--", 2))
			for (char *c = argv[a] + 2; *c && *c != '='; c++)
				if (*c == '-')
					*c = '_';
	while ((ch = getopt_long(argc, argv, "", opts, &i)) != -1) {
		if (ch != 0)
			return -1;
		char *end;
		errno = 0;
		long v = strtol(optarg, &end, 10);
		if (errno || *end || end == optarg || v < lo[i] || v > hi[i]) {
			char flag[32];
			snprintf(flag, sizeof(flag), "%s", opts[i].name);
			for (char *c = flag; *c; c++)
				*c = *c == '_' ? '-' : *c;
			fprintf(stderr, "epoll-unixwake: --%s '%s': expected a whole number in %ld..%ld\n",
				flag, optarg, lo[i], hi[i]);
			return -1;
		}
		*slot[i] = v;
	}
	if (optind != argc) {
		fprintf(stderr, "epoll-unixwake: '%s': not a flag\n", argv[optind]);
		return -1;
	}
	if (p.quota_us > p.period_us || p.cpu == p.ping_cpu) {
		fprintf(stderr, "epoll-unixwake: --quota-us above --period-us, or --cpu = --ping-cpu\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (parse(argc, argv)) {
		fprintf(stderr, "usage: epoll-unixwake [--seconds S] [--senders N] [--quota-us US] "
			"[--period-us US] [--tick-us US] [--ping-us US] [--stall-ms MS] [--late-ms MS] "
			"[--cpu N] [--ping-cpu N] [--waiter-prio P]\n");
		return EX_USAGE;
	}
	char err[512];
	if (cg_open(&cg, NULL, "unixwake", true, err, sizeof(err)))
		refuse_cg(err);
	if (pipe2(order_pipe, O_CLOEXEC))
		refuse("pipe");
	int load = bound_socket("load", &load_addr, &load_len);
	int ping = bound_socket("ping", &ping_addr, &ping_len);
	int tick = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	struct timespec every = { p.tick_us / 1000000, p.tick_us % 1000000 * 1000 };
	struct itimerspec it = { .it_interval = every, .it_value = every };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (tick < 0 || ep < 0 || timerfd_settime(tick, 0, &it, NULL))
		refuse("epoll or timerfd");
	int fds[] = { load, ping, tick };
	for (int i = 0; i < 3; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[i] };
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			refuse("epoll_ctl");
	}
	pthread_t quota, pinger, watchdog, senders[MAX_SENDERS];
	if (pthread_create(&quota, NULL, quota_loop, NULL))
		refuse("the quota thread");
	for (long i = 0; i < p.senders; i++)
		if (pthread_create(&senders[i], NULL, send_loop, NULL))
			refuse("sender %ld", i);
	place(p.cpu, (int)p.waiter_prio);
	long cap = p.seconds * 1000000 / p.ping_us + 16, nlat = 0, loads = 0;
	int64_t *lat = calloc((size_t)cap, sizeof(*lat));
	if (!lat)
		refuse("memory");
	atomic_store(&beat_ns, now_ns());
	if (pthread_create(&pinger, NULL, ping_loop, NULL) ||
	    pthread_create(&watchdog, NULL, watch_loop, NULL))
		refuse("the pinger or the watchdog");
	int64_t end = now_ns() + p.seconds * 1000000000LL;
	while (now_ns() < end) {
		struct epoll_event ev[4];
		int n = epoll_wait(ep, ev, 4, 100);
		atomic_store(&beat_ns, now_ns());
		for (int i = 0; i < n; i++) {
			int fd = ev[i].data.fd;
			char buf[64];
			int64_t due;
			uint64_t expired;
			if (fd == tick)
				(void)read(tick, &expired, sizeof(expired));
			else if (fd == load)
				while (recv(load, buf, sizeof(buf), 0) > 0)
					loads++;
			else
				while (recv(ping, &due, sizeof(due), 0) == sizeof(due))
					if (nlat < cap)
						lat[nlat++] = now_ns() - due;
		}
	}
	atomic_store(&stop, true);
	pthread_join(pinger, NULL);
	pthread_join(watchdog, NULL);
	for (long i = 0; i < p.senders; i++)
		pthread_join(senders[i], NULL);
	order('Q');
	pthread_join(quota, NULL);

	qsort(lat, (size_t)nlat, sizeof(*lat), by_value);
	long late = 0;
	for (long i = 0; i < nlat; i++)
		late += lat[i] > p.late_ms * 1000000;
	struct cg_stat st = { 0 };
	(void)cg_read_stat(&cg, &st);
	cg_close(&cg);
	struct utsname u;
	uname(&u);
	printf("{\"kernel\": \"%s\", \"seconds\": %ld, \"senders\": %ld, \"quota_us\": %ld, "
	       "\"period_us\": %ld, \"tick_us\": %ld, \"pings\": %ld, \"late_ms\": %ld, \"late\": %ld, "
	       "\"ping_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p99_9\": %.1f, \"max\": %.1f}, "
	       "\"stall_ms\": %ld, \"stalls\": %ld, \"stalls_ended_by_lift\": %ld, "
	       "\"longest_stall_ms\": %.1f, \"co_tenant_datagrams\": %ld, "
	       "\"periods\": %llu, \"throttled_periods\": %llu}\n",
	       u.release, p.seconds, p.senders, p.quota_us, p.period_us, p.tick_us, nlat, p.late_ms,
	       late, pct_us(lat, nlat, 0.5), pct_us(lat, nlat, 0.99), pct_us(lat, nlat, 0.999),
	       pct_us(lat, nlat, 1.0), p.stall_ms, stalls.n, stalls.lifted,
	       (double)stalls.longest_ns / 1e6, loads, (unsigned long long)st.nr_periods,
	       (unsigned long long)st.nr_throttled);
	free(lat);
	return stalls.n || late ? 1 : 0;
}
