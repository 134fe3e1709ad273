/* run: set up, drive and collect one load run. */
#include "run.h"

#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "rt.h"
#include "sender.h"
#include "wire.h"

#define SOCKBUF		(4 << 20)
#define START_DELAY_NS	(20 * 1000 * 1000LL)	/* threads settle first */
#define PROBE_RESEND_MS	200

static volatile sig_atomic_t signals;

static void on_signal(int sig)
{
	(void)sig;
	signals++;
}

void run_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

bool run_interrupted(void)
{
	return signals > 0;
}

static int say(char *err, size_t errlen, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *err, size_t errlen, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
}

static bool is_stream(const struct opts *o)
{
	return o->target.kind == ADDR_TCP;
}

/* Connect fd within timeout_ms (TCP: the socket stays non-blocking). */
static int connect_within(const struct opts *o, int fd, char *err,
			  size_t errlen)
{
	int e = 0;
	socklen_t el = sizeof(e);
	if (connect(fd, (const struct sockaddr *)&o->target.sa,
		    o->target.salen) == 0)
		return 0;
	if (errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int n = poll(&p, 1, (int)o->timeout_ms);
		if (n == 0)
			return say(err, errlen, EX_UNAVAILABLE, "cannot connect "
				   "to %s within %lld ms", o->target_text,
				   (long long)o->timeout_ms);
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
		if (n > 0 && !e)
			return 0;
		errno = e ? e : errno;
	}
	if (errno == ECONNREFUSED)
		return say(err, errlen, EX_UNAVAILABLE, "%s refuses: nothing "
			   "listens there", o->target_text);
	return say(err, errlen, EX_UNAVAILABLE, "cannot reach %s: %s",
		   o->target_text, strerror(errno));
}

static int open_flow(const struct opts *o, int *fd, char *err, size_t errlen)
{
	bool stream = is_stream(o);
	*fd = socket(o->target.sa.ss_family, (stream ? SOCK_STREAM | SOCK_NONBLOCK
						     : SOCK_DGRAM) | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return say(err, errlen, EX_OSERR, "cannot open a socket: %s",
			   strerror(errno));
	int sz = SOCKBUF, on = 1;
	if (setsockopt(*fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(*fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	if (setsockopt(*fd, SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
		setsockopt(*fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (stream)	/* each message goes out when it is due */
		setsockopt(*fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	else
		setsockopt(*fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	/* An AF_UNIX socket is nameless until bound, and the target needs a
	 * name to answer to: let the kernel pick an abstract one. */
	sa_family_t family = AF_UNIX;
	if (o->target.kind == ADDR_UNIX &&
	    bind(*fd, (const struct sockaddr *)&family, sizeof(family)) < 0)
		return say(err, errlen, EX_OSERR, "cannot bind an AF_UNIX "
			   "socket: %s", strerror(errno));
	return connect_within(o, *fd, err, errlen);
}

/* Wait up to until for fd to be readable: 1 readable, 0 not (yet). */
static int wait_readable(int fd, int64_t until)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, now < until ? (int)((until - now) / 1000000) + 1 : 0);
	return n > 0 ? 1 : 0;
}

/* Check the target answers on flow fd before loading it: one probe
 * message, resent every PROBE_RESEND_MS on UDP; on TCP exactly one
 * message's bytes are read back, so the stream stays aligned. */
static int probe(const struct opts *o, int fd, uint32_t run_id, char *err,
		 size_t errlen)
{
	bool stream = is_stream(o);
	size_t cap = (size_t)o->size > 2048 ? (size_t)o->size : 2048;
	uint8_t *buf = calloc(1, cap);
	if (!buf)
		return say(err, errlen, EX_OSERR, "out of memory");
	struct wire w = { .run_id = run_id, .seq = WIRE_PROBE }, r;
	int64_t deadline = clock_ns(CLOCK_MONOTONIC) + o->timeout_ms * 1000000;
	int64_t resend = 0;
	size_t got = 0;
	int status = -1;
	while (status < 0) {
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		if (now >= deadline) {
			status = say(err, errlen, EX_UNAVAILABLE,
				     "no answer from %s within %lld ms: it is "
				     "not an echo server, or not reachable "
				     "(--no-probe sends anyway)",
				     o->target_text, (long long)o->timeout_ms);
			break;
		}
		if (now >= resend && (!stream || resend == 0)) {
			w.sent_ns = w.intended_ns = now;
			memset(buf, 0, cap);
			wire_encode(&w, buf);
			if (send(fd, buf, (size_t)o->size, MSG_NOSIGNAL) < 0 &&
			    errno != ECONNREFUSED && errno != EAGAIN) {
				status = say(err, errlen, EX_UNAVAILABLE,
					     "cannot send to %s: %s",
					     o->target_text, strerror(errno));
				break;
			}
			resend = now + PROBE_RESEND_MS * 1000000LL;
			memset(buf, 0, cap);
		}
		int64_t until = resend < deadline ? resend : deadline;
		int ready = wait_readable(fd, until);
		if (run_interrupted()) {
			status = say(err, errlen, 130, "interrupted");
			break;
		}
		if (!ready)
			continue;
		ssize_t n = recv(fd, buf + got, stream ? (size_t)o->size - got
						       : cap, MSG_DONTWAIT);
		if ((n < 0 && errno == ECONNREFUSED) || (stream && n == 0)) {
			status = say(err, errlen, EX_UNAVAILABLE,
				     "%s refuses: nothing listens there%s",
				     o->target_text, stream
				     ? " (the connection was closed)"
				     : " (ICMP port unreachable)");
			break;
		}
		if (n <= 0)
			continue;
		got = stream ? got + (size_t)n : (size_t)n;
		if (stream && got < (size_t)o->size)
			continue;
		if (wire_decode(buf, got, run_id, &r) && r.seq == WIRE_PROBE)
			status = 0;
		got = 0;
	}
	free(buf);
	return status;
}

static int quota_status(void)
{
	return errno == EACCES || errno == EPERM || errno == EROFS
	       ? EX_OSERR : EX_UNAVAILABLE;
}

static int setup_cgroup(const struct opts *o, double quota_pct, struct cg *cg,
			char *err, size_t errlen)
{
	char why[1024];
	if (cg_open(cg, o->cgroup, "loadgen", o->quota_threads, why,
		    sizeof(why)) < 0)
		return say(err, errlen, quota_status(), "cgroup: %s (or run "
			   "without --cpu-quota)", why);
	if (quota_pct >= 0 &&
	    cg_set_quota(cg, cg_quota_us(quota_pct, o->period_us),
			 o->period_us, why, sizeof(why)) < 0)
		return say(err, errlen, quota_status(), "cgroup: %s", why);
	if (!o->quota_threads && cg_add_process(cg, 0, why, sizeof(why)) < 0)
		return say(err, errlen, quota_status(), "cgroup: %s", why);
	return 0;
}

static void clear_line(bool on)
{
	if (on)
		fputs("\r\033[K", stderr);
}

static void progress(struct sender *senders, int n, struct hist *tmp,
		     int64_t start, double duration_s)
{
	uint64_t sent = 0, lost = 0;
	hist_reset(tmp);
	for (int i = 0; i < n; i++) {
		uint64_t s = __atomic_load_n(&senders[i].sent, __ATOMIC_RELAXED);
		uint64_t got = __atomic_load_n(&senders[i].track.received,
					       __ATOMIC_RELAXED);
		sent += s;
		lost += s > got ? s - got : 0;
		hist_merge(tmp, &senders[i].corrected);
	}
	double el = (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	if (el <= 0)
		return;
	double left = duration_s - el > 0 ? duration_s - el : 0;
	fprintf(stderr, "\r\033[K%5.1fs of %.1fs (%.1fs left)  %.0f pps  p50 %lldus"
		"  p99 %lldus  max %lldus  unanswered %llu", el, duration_s, left,
		(double)sent / el, (long long)hist_percentile(tmp, 50),
		(long long)hist_percentile(tmp, 99), (long long)hist_max(tmp),
		(unsigned long long)lost);
}

/* Wait for the senders, showing progress and passing signals on. */
static void supervise(const struct opts *o, struct sender *senders, int n,
		      int64_t start, struct run_result *r)
{
	bool show = o->progress != 0 && isatty(STDERR_FILENO);
	struct hist tmp;
	int seen = 0;
	int64_t next_show = start + 1000000000LL;
	hist_init_us(&tmp);
	for (;;) {
		int done = 0;
		for (int i = 0; i < n; i++)
			done += sender_done(&senders[i]);
		if (done == n)
			break;
		if (signals != seen) {
			seen = signals;
			r->interrupted = true;
			for (int i = 0; i < n; i++)
				sender_stop(&senders[i], seen > 1);
		}
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		if (show && clock_ns(CLOCK_MONOTONIC) >= next_show) {
			progress(senders, n, &tmp, start, o->duration_s);
			next_show += 1000000000LL;
		}
	}
	clear_line(show);
	hist_free(&tmp);
}

static void collect(struct sender *senders, int n, int64_t start, double rate,
		    struct run_result *r)
{
	int64_t last = start;
	for (int i = 0; i < n; i++) {
		struct sender *s = &senders[i];
		hist_merge(&r->corrected, &s->corrected);
		hist_merge(&r->uncorrected, &s->uncorrected);
		hist_merge(&r->sched_err, &s->sched_err);
		slow_merge(&r->slow, &s->slow);
		r->sent += s->sent;
		r->received += s->track.received;
		r->duplicated += s->track.duplicated;
		r->reordered += s->track.reordered;
		r->late += s->track.late;
		r->foreign += s->track.foreign;
		r->send_errors += s->send_errors;
		r->refused += s->refused;
		if (s->last_send_ns > last)
			last = s->last_send_ns;
	}
	r->lost = r->sent > r->received ? r->sent - r->received : 0;
	r->send_span_s = (double)(last - start) / 1e9 + 1.0 / rate;
	r->achieved_rate = r->sent ? (double)r->sent / r->send_span_s : 0;
	r->rate_ok = r->achieved_rate >= 0.99 * rate;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int run_once(const struct opts *o, double rate, double quota_pct,
	     struct run_result *r, char *err, size_t errlen)
{
	int T = o->threads, F = o->flows, status = 0, started = 0;
	int *fds = malloc((size_t)F * sizeof(int));
	struct sender *senders = calloc((size_t)T, sizeof(*senders));
	struct cg cg = { 0 }, watch = { 0 };
	struct cg_stat st0 = { 0 }, wst0 = { 0 };
	struct rusage ru0, ru1;
	uint32_t run_id;
	sigset_t block, old;

	memset(r, 0, sizeof(*r));
	r->target_rate = rate;
	r->duration_s = o->duration_s;
	r->expected = sched_total(rate, o->duration_s);
	if (!fds || !senders || hist_init_us(&r->corrected) < 0 ||
	    hist_init_us(&r->uncorrected) < 0 || hist_init_us(&r->sched_err) < 0 ||
	    slow_init(&r->slow, o->list_over_us ? SLOW_MAX : 0) < 0) {
		free(fds);
		free(senders);
		return say(err, errlen, EX_OSERR, "out of memory");
	}
	for (int f = 0; f < F; f++)
		fds[f] = -1;
	/* early in a guest's boot the pool may not be ready: do not wait */
	if (getrandom(&run_id, sizeof(run_id), GRND_NONBLOCK) != sizeof(run_id))
		run_id = (uint32_t)(clock_ns(CLOCK_MONOTONIC) ^ getpid());
	getrusage(RUSAGE_SELF, &ru0);

	if ((quota_pct >= 0 || o->cgroup) &&
	    (status = setup_cgroup(o, quota_pct, &cg, err, errlen)))
		goto out;
	if (o->watch_cgroup) {
		char why[1024];
		if (cg_open(&watch, o->watch_cgroup, "watch", false, why,
			    sizeof(why)) < 0) {
			status = say(err, errlen, EX_UNAVAILABLE,
				     "--watch-cgroup: %s", why);
			goto out;
		}
	}
	if (o->ncpus && rt_pin(o->cpus[0], err, errlen) < 0) {
		status = EX_OSERR;
		goto out;
	}
	for (int f = 0; f < F && !status; f++)
		status = open_flow(o, &fds[f], err, errlen);
	for (int f = 0; f < F && !status && o->probe; f++)
		status = probe(o, fds[f], run_id, err, errlen);
	if (status)
		goto out;

	if (o->timeseries) {
		if (series_init(&r->series, 0, o->window_ms * 1000000LL, T) < 0) {
			status = say(err, errlen, EX_OSERR, "out of memory");
			goto out;
		}
		r->has_series = true;
	}
	/* signals go to this thread only: senders never see EINTR */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	for (int k = 0, at = 0; k < T && !status; k++) {
		struct sender_conf c = {
			.idx = k, .nthreads = T, .fds = fds + at,
			.nfds = (F - k + T - 1) / T, .run_id = run_id,
			.size = (size_t)o->size, .rate = rate,
			.total = r->expected,
			.timeout_ns = o->timeout_ms * 1000000LL,
			.cpu = o->ncpus ? o->cpus[k % o->ncpus] : -1,
			.rt_prio = o->rt_prio,
			.epoll_timer = o->epoll_timer,
			.spin_ns = o->spin_us * 1000LL,
			.list_over_ns = o->list_over_us * 1000LL,
			.list_cap = SLOW_MAX / (size_t)T,
			.stream = is_stream(o),
			.series = r->has_series ? &r->series : NULL,
		};
		at += c.nfds;
		if (sender_start(&senders[k], &c, err, errlen) < 0)
			status = EX_OSERR;
		started = k + 1;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (int k = 0; k < started && !status && o->quota_threads; k++) {
		char why[1024];
		if (cg_add_thread(&cg, senders[k].tid, why, sizeof(why)) < 0)
			status = say(err, errlen, quota_status(), "cgroup: %s",
				     why);
	}
	if (status) {
		for (int k = 0; k < started; k++) {
			sender_stop(&senders[k], true);
			sender_join(&senders[k]);
		}
		goto out;
	}

	if (cg.path[0])
		cg_read_stat(&cg, &st0);
	if (watch.path[0])
		cg_read_stat(&watch, &wst0);
	int64_t start = clock_ns(CLOCK_MONOTONIC) + START_DELAY_NS;
	r->start_unix_s = (double)(clock_ns(CLOCK_REALTIME) + START_DELAY_NS) /
			  1e9;
	r->series.start_ns = start;
	for (int k = 0; k < T; k++)
		sender_go(&senders[k], start);
	supervise(o, senders, T, start, r);
	for (int k = 0; k < T; k++)
		if (sender_join(&senders[k]) < 0 && !status)
			status = say(err, errlen, EX_SOFTWARE, "%s",
				     senders[k].err);
	collect(senders, T, start, rate, r);
	r->elapsed_s = (double)(clock_ns(CLOCK_MONOTONIC) - start) / 1e9;
	r->series_end_ns = clock_ns(CLOCK_MONOTONIC);
	if (r->interrupted && !status)
		status = say(err, errlen, 130, "interrupted");

	if (cg.path[0]) {
		struct cg_stat st1;
		snprintf(r->cgroup.path, sizeof(r->cgroup.path), "%s", cg.path);
		r->cgroup.version = cg.version;
		r->cgroup.threads_only = o->quota_threads;
		cg_get_quota(&cg, &r->cgroup.quota_us, &r->cgroup.period_us);
		if (cg_read_stat(&cg, &st1) == 0)
			r->cgroup.stat = cg_stat_delta(&st0, &st1);
	}
	if (watch.path[0]) {
		struct cg_stat st1;
		snprintf(r->watched.path, sizeof(r->watched.path), "%s",
			 watch.path);
		if (cg_read_stat(&watch, &st1) == 0)
			r->watched.stat = cg_stat_delta(&wst0, &st1);
	}
	getrusage(RUSAGE_SELF, &ru1);
	r->cpu_user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	r->cpu_sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
out:
	for (int k = 0; k < started; k++)
		sender_free(&senders[k]);
	for (int f = 0; f < F; f++)
		if (fds[f] >= 0)
			close(fds[f]);
	cg_close(&cg);
	cg_close(&watch);
	free(fds);
	free(senders);
	return status;
}

void run_result_free(struct run_result *r)
{
	hist_free(&r->corrected);
	hist_free(&r->uncorrected);
	hist_free(&r->sched_err);
	slow_free(&r->slow);
	if (r->has_series)
		series_free(&r->series);
	r->has_series = false;
}
