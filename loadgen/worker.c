/*
 * worker: the per-thread event loop. Pacing uses a one-shot libevent timer
 * on a base made with EVENT_BASE_FLAG_PRECISE_TIMER (a timerfd on epoll, so
 * microsecond wake-ups instead of 1 ms ticks) and no time cache; the timer
 * slack of the thread is set to 1 ns so the kernel does not defer the
 * wake-up by its default 50 us. With epoll_timer the base keeps libevent's
 * epoll_wait timeouts (1 ms): on a PREEMPT_RT kernel without task-based
 * throttling, a timerfd in the epoll set of a quota-throttled thread can
 * block the timer softirq that would end the throttling.
 *
 * Even so, waking an idle CPU takes tens of us on a virtual machine (the
 * vCPU halted in the hypervisor, the interrupt injected, the thread
 * scheduled). With spin_ns the timer fires that much before a packet is
 * due and the thread busy-waits the rest of the way, trading CPU for
 * precision. A read callback first sends what is due: libevent runs the
 * sockets' callbacks before the timer's when both are ready, and a due
 * send should not wait behind a batch of replies.
 */
#include "worker.h"

#include <errno.h>
#include <event2/event.h>
#include <event2/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "wire.h"

#define BURST_MAX	1024	/* packets per timer callback before reading */
#define READ_ROUNDS	16	/* recvmmsg calls per read callback */
#define RBUF_LEN	2048	/* we only look at the header of a reply */
#define STOP_DRAIN_NS	(500 * 1000 * 1000LL) /* replies awaited after a stop */

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

int64_t worker_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t ns_to_us(int64_t ns)
{
	return (ns + 500) / 1000;
}

/* Tell the CPU this is a busy-wait: it may save power and, on SMT, leave
 * the core to its sibling. */
static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* Busy-wait from now until the next packet is due, at most c.spin_ns.
 * Returns the time it ends. */
static int64_t spin(const struct worker *w, int64_t now)
{
	int64_t until = now + sched_spin_ns(&w->sched, now, w->c.spin_ns);
	while (now < until) {
		cpu_relax();
		now = worker_now();
	}
	return now;
}

static void arm(struct worker *w, int64_t at_ns)
{
	int64_t d = at_ns - worker_now();
	struct timeval tv = { 0, 0 };
	if (d > 0) {
		d = (d + 999) / 1000;	/* never early: round up to a us */
		tv.tv_sec = d / 1000000;
		tv.tv_usec = d % 1000000;
	}
	evtimer_add(w->timer, &tv);
}

/* Send the packets from sched.next on, n of them, in one sendmmsg per
 * flow. Returns how many are done (sent or failed for good). */
static uint64_t send_dgrams(struct worker *w, uint64_t n)
{
	struct mmsghdr msgs[WORKER_BATCH];
	struct iovec iov[WORKER_BATCH];
	int64_t now = worker_now();
	uint64_t first = w->sched.next;

	for (uint64_t j = 0; j < n; j++) {
		struct wire h = {
			.run_id = w->c.run_id, .thread = (uint32_t)w->c.idx,
			.seq = first + j,
			.intended_ns = sched_intended(&w->sched, first + j),
			.sent_ns = now,
		};
		wire_encode(&h, w->sbuf + j * w->c.size);
	}
	for (int f = 0; f < w->c.nfds; f++) {
		int m = 0;
		uint64_t idx[WORKER_BATCH];
		for (uint64_t j = 0; j < n; j++) {
			if ((first + j) % (uint64_t)w->c.nfds != (uint64_t)f)
				continue;
			iov[m].iov_base = w->sbuf + j * w->c.size;
			iov[m].iov_len = w->c.size;
			memset(&msgs[m], 0, sizeof(msgs[m]));
			msgs[m].msg_hdr.msg_iov = &iov[m];
			msgs[m].msg_hdr.msg_iovlen = 1;
			idx[m++] = j;
		}
		int k = 0;
		while (k < m) {
			int r = sendmmsg(w->flows[f].fd, msgs + k,
					 (unsigned)(m - k), 0);
			if (r < 0 && errno == EINTR)
				continue;
			for (int x = 0; x < (r > 0 ? r : 0); x++) {
				int64_t intended = sched_intended(&w->sched,
						first + idx[k + x]);
				hist_record(&w->sched_err, ns_to_us(now - intended));
			}
			if (r > 0) {
				STORE(&w->sent, w->sent + (uint64_t)r);
				k += r;
				continue;
			}
			/* the datagram at k failed for good: count, skip it */
			if (errno == ECONNREFUSED)
				STORE(&w->refused, w->refused + 1);
			else
				STORE(&w->send_errors, w->send_errors + 1);
			k++;
		}
	}
	w->last_send_ns = now;
	sched_advance(&w->sched, n);
	return n;
}

/* A stream flow failed: it sends and receives no more. */
static void flow_dead(struct worker_flow *fl)
{
	struct worker *w = fl->w;
	if (fl->dead)
		return;
	fl->dead = true;
	event_del(fl->rd);
	event_del(fl->wr);
	STORE(&w->refused, w->refused + 1);
}

static void flush(struct worker_flow *fl)
{
	int r = stream_flush(&fl->st);
	if (r == 0)
		event_add(fl->wr, NULL);
	else if (r < 0)
		flow_dead(fl);
}

/* The stream version: queue n messages round-robin on the connections and
 * write what each connection takes now. */
static uint64_t send_stream(struct worker *w, uint64_t n)
{
	int64_t now = worker_now();
	uint64_t first = w->sched.next, sent = 0;
	for (uint64_t j = 0; j < n; j++) {
		struct worker_flow *fl =
			&w->flows[(first + j) % (uint64_t)w->c.nfds];
		uint8_t *m = fl->dead ? NULL : stream_append(&fl->st);
		if (!m) {
			STORE(&w->send_errors, w->send_errors + 1);
			continue;
		}
		struct wire h = {
			.run_id = w->c.run_id, .thread = (uint32_t)w->c.idx,
			.seq = first + j,
			.intended_ns = sched_intended(&w->sched, first + j),
			.sent_ns = now,
		};
		wire_encode(&h, m);
		hist_record(&w->sched_err, ns_to_us(now - h.intended_ns));
		sent++;
	}
	STORE(&w->sent, w->sent + sent);
	for (int f = 0; f < w->c.nfds; f++)
		if (!w->flows[f].dead && stream_pending(&w->flows[f].st))
			flush(&w->flows[f]);
	w->last_send_ns = now;
	sched_advance(&w->sched, n);
	return n;
}

static uint64_t send_batch(struct worker *w, uint64_t n)
{
	return w->c.stream ? send_stream(w, n) : send_dgrams(w, n);
}

static void end_loop(struct worker *w)
{
	event_base_loopbreak(w->base);
}

/* Sending is over: wait for the remaining replies up to the timeout. */
static void drain_check(struct worker *w, int64_t now)
{
	if (!w->drain_until) {
		int64_t t = w->c.timeout_ns;
		if (LOAD(&w->stop) && t > STOP_DRAIN_NS)
			t = STOP_DRAIN_NS;
		w->drain_until = now + t;
	}
	if (LOAD(&w->stop) == 2 || now >= w->drain_until ||
	    LOAD(&w->track.received) >= LOAD(&w->sent)) {
		end_loop(w);
		return;
	}
	int64_t next = now + 10 * 1000 * 1000;
	arm(w, next < w->drain_until ? next : w->drain_until);
}

/* Send what is due at now, at most burst packets, and arm the timer for
 * what comes next. */
static void pace(struct worker *w, int64_t now, uint64_t burst)
{
	uint64_t due = sched_due(&w->sched, now);
	uint64_t done = 0;
	while (due > 0 && done < burst) {
		uint64_t n = due < WORKER_BATCH ? due : WORKER_BATCH;
		done += send_batch(w, n);
		due -= n;
	}
	if (w->sched.next >= w->sched.count) {
		drain_check(w, worker_now());
		return;
	}
	/* still behind after a full burst: let the replies in, come back */
	arm(w, due ? 0 : sched_wake_time(&w->sched, w->c.spin_ns));
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	(void)fd;
	(void)what;
	int64_t now = worker_now();
	if (w->c.spin_ns && !LOAD(&w->stop))
		now = spin(w, now);
	if (w->c.series)
		series_tick(&w->series, now);
	if (LOAD(&w->stop) || w->sched.next >= w->sched.count) {
		drain_check(w, now);
		return;
	}
	pace(w, now, BURST_MAX);
}

static void on_reply(struct worker *w, const uint8_t *buf, size_t len,
		     int64_t now)
{
	struct wire h;
	if (!wire_decode(buf, len, w->c.run_id, &h)) {
		track_foreign(&w->track);
		return;
	}
	if (h.seq == WIRE_PROBE)	/* a slow answer to the run's probe */
		return;
	if (h.thread != (uint32_t)w->c.idx) {
		track_foreign(&w->track);
		return;
	}
	bool late = now - h.intended_ns > w->c.timeout_ns;
	if (track_reply(&w->track, h.seq, late) != TRACK_NEW)
		return;
	int64_t corrected = ns_to_us(now - h.intended_ns);
	hist_record(&w->corrected, corrected);
	hist_record(&w->uncorrected, ns_to_us(now - h.sent_ns));
	if (w->c.series)
		series_record(&w->series, now, corrected);
}

/* When the kernel queued the reply (SO_TIMESTAMPNS, CLOCK_REALTIME) on the
 * monotonic clock, so time loadgen itself spends before reading (a busy or
 * throttled loadgen) does not count as latency; now when there is none. */
static int64_t arrival(struct msghdr *m, int64_t now, int64_t real_minus_mono)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		struct timespec ts;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec -
			    real_minus_mono;
		return t < now ? t : now;
	}
	return now;
}

static void on_message(void *arg, const uint8_t *msg, size_t len)
{
	on_reply(arg, msg, len, worker_now());
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct worker_flow *fl = arg;
	struct worker *w = fl->w;
	struct mmsghdr msgs[WORKER_BATCH];
	struct iovec iov[WORKER_BATCH];
	char ctl[WORKER_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	(void)what;
	/* one batch at most: when far behind, the replies get their turn */
	if (!w->drain_until && !LOAD(&w->stop)) {
		int64_t now = worker_now();
		if (sched_due(&w->sched, now))
			pace(w, now, WORKER_BATCH);
	}
	if (w->c.stream) {
		if (stream_read(&fl->st, READ_ROUNDS, on_message, w) != 0)
			flow_dead(fl);
		if (w->drain_until &&
		    LOAD(&w->track.received) >= LOAD(&w->sent))
			end_loop(w);
		return;
	}
	for (int round = 0; round < READ_ROUNDS; round++) {
		for (int j = 0; j < WORKER_BATCH; j++) {
			iov[j].iov_base = w->rbuf + (size_t)j * RBUF_LEN;
			iov[j].iov_len = RBUF_LEN;
			memset(&msgs[j], 0, sizeof(msgs[j]));
			msgs[j].msg_hdr.msg_iov = &iov[j];
			msgs[j].msg_hdr.msg_iovlen = 1;
			msgs[j].msg_hdr.msg_control = ctl[j];
			msgs[j].msg_hdr.msg_controllen = sizeof(ctl[j]);
		}
		int r = recvmmsg(fd, msgs, WORKER_BATCH, MSG_DONTWAIT, NULL);
		if (r < 0) {
			if (errno == ECONNREFUSED)
				STORE(&w->refused, w->refused + 1);
			break;
		}
		struct timespec real;
		int64_t now = worker_now();
		clock_gettime(CLOCK_REALTIME, &real);
		int64_t off = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec
			      - now;
		for (int j = 0; j < r; j++)
			on_reply(w, w->rbuf + (size_t)j * RBUF_LEN,
				 msgs[j].msg_len,
				 arrival(&msgs[j].msg_hdr, now, off));
		if (r < WORKER_BATCH)
			break;
	}
	if (w->drain_until && LOAD(&w->track.received) >= LOAD(&w->sent))
		end_loop(w);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	(void)fd;
	(void)what;
	if (LOAD(&w->stop) == 2)
		end_loop(w);
	else
		drain_check(w, worker_now());
}

static void fail(struct worker *w, const char *fmt, const char *detail)
{
	snprintf(w->err, sizeof(w->err), fmt, w->c.idx, detail);
}

static void *thread_main(void *arg)
{
	struct worker *w = arg;
	char why[256];
	w->tid = gettid();
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (w->c.cpu >= 0 && rt_pin(w->c.cpu, why, sizeof(why)) < 0)
		fail(w, "thread %d: %s", why);
	else if (w->c.rt_prio && rt_set_fifo(w->c.rt_prio, why, sizeof(why)) < 0)
		fail(w, "thread %d: %s", why);

	pthread_mutex_lock(&w->mu);
	w->ready = true;
	pthread_cond_broadcast(&w->cond);
	while (!w->go)
		pthread_cond_wait(&w->cond, &w->mu);
	int64_t start = w->start_ns;
	pthread_mutex_unlock(&w->mu);
	if (w->err[0] || LOAD(&w->stop)) {
		STORE(&w->done, true);
		return NULL;
	}

	w->sched.start_ns = start;
	arm(w, sched_wake_time(&w->sched, w->c.spin_ns));
	if (event_base_dispatch(w->base) < 0)
		fail(w, "thread %d: %s", "event loop failed");
	if (w->c.series)
		series_finish(&w->series);
	STORE(&w->done, true);
	return NULL;
}

/* worker_stop calls event_active from another thread: libevent needs its
 * locks for that. */
static void use_threads(void)
{
	evthread_use_pthreads();
}

int worker_start(struct worker *w, const struct worker_conf *c, char *err,
		 size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, use_threads);

	memset(w, 0, sizeof(*w));
	w->c = *c;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cond, NULL);
	struct event_config *cfg = event_config_new();
	if (cfg) {
		if (!c->epoll_timer)
			event_config_set_flag(cfg,
					      EVENT_BASE_FLAG_PRECISE_TIMER);
		event_config_set_flag(cfg, EVENT_BASE_FLAG_NO_CACHE_TIME);
		w->base = event_base_new_with_config(cfg);
		event_config_free(cfg);
	}
	w->sbuf = calloc(WORKER_BATCH, c->size);
	w->rbuf = malloc((size_t)WORKER_BATCH * RBUF_LEN);
	w->flows = calloc((size_t)c->nfds, sizeof(*w->flows));
	if (!w->base || !w->sbuf || !w->rbuf || !w->flows ||
	    hist_init_us(&w->corrected) < 0 ||
	    hist_init_us(&w->uncorrected) < 0 ||
	    hist_init_us(&w->sched_err) < 0 ||
	    (c->series && series_local_init(&w->series, c->series, c->idx) < 0)) {
		snprintf(err, errlen, "thread %d: out of memory", c->idx);
		return -1;
	}
	/* the schedule's start comes with worker_go; its length is known now,
	 * and the sequence map is ready before any reader can look at it */
	sched_init(&w->sched, 0, c->rate, c->total, (uint64_t)c->idx,
		   (uint64_t)c->nthreads);
	if (track_init(&w->track, w->sched.count) < 0) {
		snprintf(err, errlen, "thread %d: out of memory for the "
			 "sequence map", c->idx);
		return -1;
	}
	w->timer = evtimer_new(w->base, on_timer, w);
	w->stop_ev = event_new(w->base, -1, 0, on_stop, w);
	for (int f = 0; f < c->nfds; f++) {
		struct worker_flow *fl = &w->flows[f];
		fl->w = w;
		fl->fd = c->fds[f];
		fl->rd = event_new(w->base, fl->fd, EV_READ | EV_PERSIST,
				   on_read, fl);
		fl->wr = event_new(w->base, fl->fd, EV_WRITE, on_write, fl);
		if (!fl->rd || !fl->wr || event_add(fl->rd, NULL) < 0 ||
		    (c->stream && stream_init(&fl->st, fl->fd, c->size) < 0)) {
			snprintf(err, errlen, "thread %d: cannot watch socket",
				 c->idx);
			return -1;
		}
	}
	int e = pthread_create(&w->thread, NULL, thread_main, w);
	if (e) {
		snprintf(err, errlen, "cannot start thread %d: %s", c->idx,
			 strerror(e));
		return -1;
	}
	w->spawned = true;
	pthread_mutex_lock(&w->mu);
	while (!w->ready)
		pthread_cond_wait(&w->cond, &w->mu);
	pthread_mutex_unlock(&w->mu);
	if (w->err[0]) {
		snprintf(err, errlen, "%s", w->err);
		return -1;
	}
	return 0;
}

void worker_go(struct worker *w, int64_t start_ns)
{
	pthread_mutex_lock(&w->mu);
	w->start_ns = start_ns;
	w->go = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
}

void worker_stop(struct worker *w, bool now)
{
	pthread_mutex_lock(&w->mu);
	STORE(&w->stop, now ? 2 : 1);
	bool started = w->go;
	w->go = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
	if (started && w->stop_ev)
		event_active(w->stop_ev, 0, 0);
}

bool worker_done(const struct worker *w)
{
	return LOAD(&w->done);
}

int worker_join(struct worker *w)
{
	if (!w->spawned)
		return -1;
	pthread_join(w->thread, NULL);
	w->spawned = false;
	return w->err[0] ? -1 : 0;
}

void worker_free(struct worker *w)
{
	for (int f = 0; w->flows && f < w->c.nfds; f++) {
		struct worker_flow *fl = &w->flows[f];
		if (fl->rd)
			event_free(fl->rd);
		if (fl->wr)
			event_free(fl->wr);
		stream_free(&fl->st);
	}
	if (w->timer)
		event_free(w->timer);
	if (w->stop_ev)
		event_free(w->stop_ev);
	if (w->base)
		event_base_free(w->base);
	free(w->flows);
	free(w->sbuf);
	free(w->rbuf);
	hist_free(&w->corrected);
	hist_free(&w->uncorrected);
	hist_free(&w->sched_err);
	if (w->c.series)
		series_local_free(&w->series);
	track_free(&w->track);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cond);
}
