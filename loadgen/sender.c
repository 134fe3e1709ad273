/*
 * sender: the per-thread event loop. Pacing uses a one-shot libevent timer
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
#include "sender.h"

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

#include "clock.h"
#include "rt.h"
#include "wire.h"

#define BURST_MAX	1024	/* packets per timer callback before reading */
#define READ_ROUNDS	16	/* recvmmsg calls per read callback */
#define RBUF_LEN	2048	/* we only look at the header of a reply */
#define STOP_DRAIN_NS	(500 * 1000 * 1000LL) /* replies awaited after a stop */

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

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
static int64_t spin(const struct sender *s, int64_t now)
{
	int64_t until = now + sched_spin_ns(&s->sched, now, s->c.spin_ns);
	while (now < until) {
		cpu_relax();
		now = clock_ns(CLOCK_MONOTONIC);
	}
	return now;
}

static void arm(struct sender *s, int64_t at_ns)
{
	int64_t d = at_ns - clock_ns(CLOCK_MONOTONIC);
	struct timeval tv = { 0, 0 };
	if (d > 0) {
		d = (d + 999) / 1000;	/* never early: round up to a us */
		tv.tv_sec = d / 1000000;
		tv.tv_usec = d % 1000000;
	}
	evtimer_add(s->timer, &tv);
}

/* Send the packets from sched.next on, n of them, in one sendmmsg per
 * flow. Returns how many are done (sent or failed for good). */
static uint64_t send_dgrams(struct sender *s, uint64_t n)
{
	struct mmsghdr msgs[SENDER_BATCH];
	struct iovec iov[SENDER_BATCH];
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	uint64_t first = s->sched.next;

	for (uint64_t j = 0; j < n; j++) {
		struct wire h = {
			.run_id = s->c.run_id, .thread = (uint32_t)s->c.idx,
			.seq = first + j,
			.intended_ns = sched_intended(&s->sched, first + j),
			.sent_ns = now,
		};
		wire_encode(&h, s->sbuf + j * s->c.size);
	}
	for (int f = 0; f < s->c.nfds; f++) {
		int m = 0;
		uint64_t idx[SENDER_BATCH];
		for (uint64_t j = 0; j < n; j++) {
			if ((first + j) % (uint64_t)s->c.nfds != (uint64_t)f)
				continue;
			iov[m].iov_base = s->sbuf + j * s->c.size;
			iov[m].iov_len = s->c.size;
			memset(&msgs[m], 0, sizeof(msgs[m]));
			msgs[m].msg_hdr.msg_iov = &iov[m];
			msgs[m].msg_hdr.msg_iovlen = 1;
			idx[m++] = j;
		}
		int k = 0;
		while (k < m) {
			int r = sendmmsg(s->flows[f].fd, msgs + k,
					 (unsigned)(m - k), 0);
			if (r < 0 && errno == EINTR)
				continue;
			for (int x = 0; x < (r > 0 ? r : 0); x++) {
				int64_t intended = sched_intended(&s->sched,
						first + idx[k + x]);
				hist_record(&s->sched_err, ns_to_us(now - intended));
			}
			if (r > 0) {
				STORE(&s->sent, s->sent + (uint64_t)r);
				k += r;
				continue;
			}
			/* the datagram at k failed for good: count, skip it */
			if (errno == ECONNREFUSED)
				STORE(&s->refused, s->refused + 1);
			else
				STORE(&s->send_errors, s->send_errors + 1);
			k++;
		}
	}
	s->last_send_ns = now;
	sched_advance(&s->sched, n);
	return n;
}

/* A stream flow failed: it sends and receives no more. */
static void flow_dead(struct sender_flow *fl)
{
	struct sender *s = fl->s;
	if (fl->dead)
		return;
	fl->dead = true;
	event_del(fl->rd);
	event_del(fl->wr);
	STORE(&s->refused, s->refused + 1);
}

static void flush(struct sender_flow *fl)
{
	int r = stream_flush(&fl->st);
	if (r == 0)
		event_add(fl->wr, NULL);
	else if (r < 0)
		flow_dead(fl);
}

/* The stream version: queue n messages round-robin on the connections and
 * write what each connection takes now. */
static uint64_t send_stream(struct sender *s, uint64_t n)
{
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	uint64_t first = s->sched.next, sent = 0;
	for (uint64_t j = 0; j < n; j++) {
		struct sender_flow *fl =
			&s->flows[(first + j) % (uint64_t)s->c.nfds];
		uint8_t *m = fl->dead ? NULL : stream_append(&fl->st);
		if (!m) {
			STORE(&s->send_errors, s->send_errors + 1);
			continue;
		}
		struct wire h = {
			.run_id = s->c.run_id, .thread = (uint32_t)s->c.idx,
			.seq = first + j,
			.intended_ns = sched_intended(&s->sched, first + j),
			.sent_ns = now,
		};
		wire_encode(&h, m);
		hist_record(&s->sched_err, ns_to_us(now - h.intended_ns));
		sent++;
	}
	STORE(&s->sent, s->sent + sent);
	for (int f = 0; f < s->c.nfds; f++)
		if (!s->flows[f].dead && stream_pending(&s->flows[f].st))
			flush(&s->flows[f]);
	s->last_send_ns = now;
	sched_advance(&s->sched, n);
	return n;
}

static uint64_t send_batch(struct sender *s, uint64_t n)
{
	return s->c.stream ? send_stream(s, n) : send_dgrams(s, n);
}

static void end_loop(struct sender *s)
{
	event_base_loopbreak(s->base);
}

/* Sending is over: wait for the remaining replies up to the timeout. */
static void drain_check(struct sender *s, int64_t now)
{
	if (!s->drain_until) {
		int64_t t = s->c.timeout_ns;
		if (LOAD(&s->stop) && t > STOP_DRAIN_NS)
			t = STOP_DRAIN_NS;
		s->drain_until = now + t;
	}
	if (LOAD(&s->stop) == 2 || now >= s->drain_until ||
	    LOAD(&s->track.received) >= LOAD(&s->sent)) {
		end_loop(s);
		return;
	}
	int64_t next = now + 10 * 1000 * 1000;
	arm(s, next < s->drain_until ? next : s->drain_until);
}

/* Send what is due at now, at most burst packets, and arm the timer for
 * what comes next. */
static void pace(struct sender *s, int64_t now, uint64_t burst)
{
	uint64_t due = sched_due(&s->sched, now);
	uint64_t done = 0;
	while (due > 0 && done < burst) {
		uint64_t n = due < SENDER_BATCH ? due : SENDER_BATCH;
		done += send_batch(s, n);
		due -= n;
	}
	if (s->sched.next >= s->sched.count) {
		drain_check(s, clock_ns(CLOCK_MONOTONIC));
		return;
	}
	/* still behind after a full burst: let the replies in, come back */
	arm(s, due ? 0 : sched_wake_time(&s->sched, s->c.spin_ns));
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct sender *s = arg;
	(void)fd;
	(void)what;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	if (s->c.spin_ns && !LOAD(&s->stop))
		now = spin(s, now);
	if (s->c.series)
		series_tick(&s->series, now);
	if (LOAD(&s->stop) || s->sched.next >= s->sched.count) {
		drain_check(s, now);
		return;
	}
	pace(s, now, BURST_MAX);
}

void sender_reply(struct sender *s, const uint8_t *buf, size_t len,
		  int64_t now)
{
	struct wire h;
	if (!wire_decode(buf, len, s->c.run_id, &h)) {
		track_foreign(&s->track);
		return;
	}
	if (h.seq == WIRE_PROBE)	/* a slow answer to the run's probe */
		return;
	/* The header comes back from the target, which saw this run's id in
	 * every datagram: one that does not describe a packet this thread has
	 * sent (start <= intended <= sent <= the last send) is foreign, and
	 * its times never reach the subtractions below. */
	if (h.thread != (uint32_t)s->c.idx || h.seq >= s->sched.next ||
	    h.intended_ns < s->sched.start_ns || h.sent_ns < h.intended_ns ||
	    h.sent_ns > s->last_send_ns) {
		track_foreign(&s->track);
		return;
	}
	bool late = now - h.intended_ns > s->c.timeout_ns;
	if (track_reply(&s->track, h.seq, late) != TRACK_NEW)
		return;
	int64_t corrected = ns_to_us(now - h.intended_ns);
	hist_record(&s->corrected, corrected);
	hist_record(&s->uncorrected, ns_to_us(now - h.sent_ns));
	if (s->c.list_over_ns && now - h.intended_ns > s->c.list_over_ns)
		slow_add(&s->slow, h.intended_ns, now);
	if (s->c.series)
		series_record(&s->series, now, corrected);
}

/* When the kernel queued the reply (SO_TIMESTAMPNS, CLOCK_REALTIME) on the
 * monotonic clock, so time loadgen itself spends before reading (a busy or
 * throttled loadgen) does not count as latency; now when there is none. */
static int64_t arrival(struct msghdr *m, int64_t now, int64_t real_minus_mono)
{
	int64_t t = clock_rx_stamp_ns(m);
	if (!t)
		return now;
	t -= real_minus_mono;
	return t < now ? t : now;
}

static void on_message(void *arg, const uint8_t *msg, size_t len)
{
	sender_reply(arg, msg, len, clock_ns(CLOCK_MONOTONIC));
}

static void on_read(evutil_socket_t fd, short what, void *arg)
{
	struct sender_flow *fl = arg;
	struct sender *s = fl->s;
	struct mmsghdr msgs[SENDER_BATCH];
	struct iovec iov[SENDER_BATCH];
	char ctl[SENDER_BATCH][CMSG_SPACE(sizeof(struct timespec))];
	(void)what;
	/* one batch at most: when far behind, the replies get their turn */
	if (!s->drain_until && !LOAD(&s->stop)) {
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		if (sched_due(&s->sched, now))
			pace(s, now, SENDER_BATCH);
	}
	if (s->c.stream) {
		if (stream_read(&fl->st, READ_ROUNDS, on_message, s) != 0)
			flow_dead(fl);
		if (s->drain_until &&
		    LOAD(&s->track.received) >= LOAD(&s->sent))
			end_loop(s);
		return;
	}
	for (int round = 0; round < READ_ROUNDS; round++) {
		for (int j = 0; j < SENDER_BATCH; j++) {
			iov[j].iov_base = s->rbuf + (size_t)j * RBUF_LEN;
			iov[j].iov_len = RBUF_LEN;
			memset(&msgs[j], 0, sizeof(msgs[j]));
			msgs[j].msg_hdr.msg_iov = &iov[j];
			msgs[j].msg_hdr.msg_iovlen = 1;
			msgs[j].msg_hdr.msg_control = ctl[j];
			msgs[j].msg_hdr.msg_controllen = sizeof(ctl[j]);
		}
		int r = recvmmsg(fd, msgs, SENDER_BATCH, MSG_DONTWAIT, NULL);
		if (r < 0) {
			if (errno == ECONNREFUSED)
				STORE(&s->refused, s->refused + 1);
			break;
		}
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		int64_t off = clock_ns(CLOCK_REALTIME) - now;
		for (int j = 0; j < r; j++)
			sender_reply(s, s->rbuf + (size_t)j * RBUF_LEN,
				 msgs[j].msg_len,
				 arrival(&msgs[j].msg_hdr, now, off));
		if (r < SENDER_BATCH)
			break;
	}
	if (s->drain_until && LOAD(&s->track.received) >= LOAD(&s->sent))
		end_loop(s);
}

static void on_write(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	flush(arg);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	struct sender *s = arg;
	(void)fd;
	(void)what;
	if (LOAD(&s->stop) == 2)
		end_loop(s);
	else
		drain_check(s, clock_ns(CLOCK_MONOTONIC));
}

static void fail(struct sender *s, const char *fmt, const char *detail)
{
	snprintf(s->err, sizeof(s->err), fmt, s->c.idx, detail);
}

static void *thread_main(void *arg)
{
	struct sender *s = arg;
	char why[256];
	s->tid = gettid();
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (s->c.cpu >= 0 && rt_pin(s->c.cpu, why, sizeof(why)) < 0)
		fail(s, "thread %d: %s", why);
	else if (s->c.rt_prio && rt_set_fifo(s->c.rt_prio, why, sizeof(why)) < 0)
		fail(s, "thread %d: %s", why);

	pthread_mutex_lock(&s->mu);
	s->ready = true;
	pthread_cond_broadcast(&s->cond);
	while (!s->go)
		pthread_cond_wait(&s->cond, &s->mu);
	int64_t start = s->start_ns;
	pthread_mutex_unlock(&s->mu);
	if (s->err[0] || LOAD(&s->stop)) {
		STORE(&s->done, true);
		return NULL;
	}

	s->sched.start_ns = start;
	arm(s, sched_wake_time(&s->sched, s->c.spin_ns));
	if (event_base_dispatch(s->base) < 0)
		fail(s, "thread %d: %s", "event loop failed");
	if (s->c.series)
		series_finish(&s->series);
	STORE(&s->done, true);
	return NULL;
}

/* sender_stop calls event_active from another thread: libevent needs its
 * locks for that. */
static void use_threads(void)
{
	evthread_use_pthreads();
}

int sender_start(struct sender *s, const struct sender_conf *c, char *err,
		 size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, use_threads);

	memset(s, 0, sizeof(*s));
	s->c = *c;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cond, NULL);
	struct event_config *cfg = event_config_new();
	if (cfg) {
		if (!c->epoll_timer)
			event_config_set_flag(cfg,
					      EVENT_BASE_FLAG_PRECISE_TIMER);
		event_config_set_flag(cfg, EVENT_BASE_FLAG_NO_CACHE_TIME);
		s->base = event_base_new_with_config(cfg);
		event_config_free(cfg);
	}
	s->sbuf = calloc(SENDER_BATCH, c->size);
	s->rbuf = malloc((size_t)SENDER_BATCH * RBUF_LEN);
	s->flows = calloc((size_t)c->nfds, sizeof(*s->flows));
	if (!s->base || !s->sbuf || !s->rbuf || !s->flows ||
	    hist_init_us(&s->corrected) < 0 ||
	    hist_init_us(&s->uncorrected) < 0 ||
	    hist_init_us(&s->sched_err) < 0 ||
	    slow_init(&s->slow, c->list_over_ns ? c->list_cap : 0) < 0 ||
	    (c->series && series_local_init(&s->series, c->series, c->idx) < 0)) {
		snprintf(err, errlen, "thread %d: out of memory", c->idx);
		return -1;
	}
	/* the schedule's start comes with sender_go; its length is known now,
	 * and the sequence map is ready before any reader can look at it */
	sched_init(&s->sched, 0, c->rate, c->total, (uint64_t)c->idx,
		   (uint64_t)c->nthreads);
	if (track_init(&s->track, s->sched.count) < 0) {
		snprintf(err, errlen, "thread %d: out of memory for the "
			 "sequence map", c->idx);
		return -1;
	}
	s->timer = evtimer_new(s->base, on_timer, s);
	s->stop_ev = event_new(s->base, -1, 0, on_stop, s);
	for (int f = 0; f < c->nfds; f++) {
		struct sender_flow *fl = &s->flows[f];
		fl->s = s;
		fl->fd = c->fds[f];
		fl->rd = event_new(s->base, fl->fd, EV_READ | EV_PERSIST,
				   on_read, fl);
		fl->wr = event_new(s->base, fl->fd, EV_WRITE, on_write, fl);
		if (!fl->rd || !fl->wr || event_add(fl->rd, NULL) < 0 ||
		    (c->stream && stream_init(&fl->st, fl->fd, c->size) < 0)) {
			snprintf(err, errlen, "thread %d: cannot watch socket",
				 c->idx);
			return -1;
		}
	}
	int e = pthread_create(&s->thread, NULL, thread_main, s);
	if (e) {
		snprintf(err, errlen, "cannot start thread %d: %s", c->idx,
			 strerror(e));
		return -1;
	}
	s->spawned = true;
	pthread_mutex_lock(&s->mu);
	while (!s->ready)
		pthread_cond_wait(&s->cond, &s->mu);
	pthread_mutex_unlock(&s->mu);
	if (s->err[0]) {
		snprintf(err, errlen, "%s", s->err);
		return -1;
	}
	return 0;
}

void sender_go(struct sender *s, int64_t start_ns)
{
	pthread_mutex_lock(&s->mu);
	s->start_ns = start_ns;
	s->go = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
}

void sender_stop(struct sender *s, bool now)
{
	pthread_mutex_lock(&s->mu);
	STORE(&s->stop, now ? 2 : 1);
	bool started = s->go;
	s->go = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
	if (started && s->stop_ev)
		event_active(s->stop_ev, 0, 0);
}

bool sender_done(const struct sender *s)
{
	return LOAD(&s->done);
}

int sender_join(struct sender *s)
{
	if (!s->spawned)
		return -1;
	pthread_join(s->thread, NULL);
	s->spawned = false;
	return s->err[0] ? -1 : 0;
}

void sender_free(struct sender *s)
{
	for (int f = 0; s->flows && f < s->c.nfds; f++) {
		struct sender_flow *fl = &s->flows[f];
		if (fl->rd)
			event_free(fl->rd);
		if (fl->wr)
			event_free(fl->wr);
		stream_free(&fl->st);
	}
	if (s->timer)
		event_free(s->timer);
	if (s->stop_ev)
		event_free(s->stop_ev);
	if (s->base)
		event_base_free(s->base);
	free(s->flows);
	free(s->sbuf);
	free(s->rbuf);
	hist_free(&s->corrected);
	hist_free(&s->uncorrected);
	hist_free(&s->sched_err);
	slow_free(&s->slow);
	if (s->c.series)
		series_local_free(&s->series);
	track_free(&s->track);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cond);
}
