#include "ticker.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "rt.h"

#define MAGIC 0x726c7974696b6572ULL	/* "rlytiker": not one of loadgen's */

struct payload {
	uint64_t magic;
	int64_t due_ns;		/* when it was meant to go: its slot in the schedule */
	int64_t sent_ns;	/* when send() was called */
	char pad[8];		/* both CLOCK_REALTIME, the clock of SO_TIMESTAMPNS */
};

struct start {
	struct ticker *t;
	sem_t ready;
	int rc;
};

/* Read every echo waiting on the socket; one sample each. */
static void drain(struct ticker *t)
{
	for (;;) {
		struct payload p;
		char ctl[CMSG_SPACE(sizeof(struct timespec))];
		struct iovec iov = { &p, sizeof(p) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		ssize_t n = recvmsg(t->fd, &m, MSG_DONTWAIT);
		if (n < 0)
			return;
		int64_t rx_ns = clock_rx_stamp_ns(&m);
		if (n != (ssize_t)sizeof(p) || p.magic != MAGIC) {
			t->foreign++;
			continue;
		}
		if (!rx_ns)
			rx_ns = clock_ns(CLOCK_REALTIME);
		int64_t us = (rx_ns - p.due_ns) / 1000;
		int64_t sent_us = (rx_ns - p.sent_ns) / 1000;
		us = us < 0 ? 0 : us;
		sent_us = sent_us < 0 ? 0 : sent_us;
		hist_record(&t->lat, us);
		hist_record(&t->lat_sent, sent_us);
		t->echoes++;
		t->over_sent += sent_us > t->over_us;
		t->over += us > t->over_us;
		if (us > t->list_us && t->nlate < t->late_cap)
			t->late[t->nlate++] = (struct ticker_late){ p.due_ns, rx_ns };
	}
}

/*
 * The keeper: timers of the ticker's CPU from the ticker's wake-up to
 * just after its datagram is back, and nothing else. QEMU's TCG runs the
 * vCPUs one at a time, each for half the time to the next timer deadline
 * of any of them. With only the ticker's own timer armed, the trace
 * showed both halves of that go wrong:
 * - the idle CPU 0 took the ticker's timer on time and woke it, then did
 *   not switch to it until the next deadline, up to the slot itself and
 *   past the ticker's lead;
 * - while the datagram was in flight one vCPU ran on for up to half a
 *   millisecond while the other did not execute at all, neither to
 *   switch to a woken task nor to carry the datagram on.
 * A timer every KEEP_STEP_US from the ticker's wake-up (its lead before
 * the slot) until KEEP_SPAN_US after the slot keeps both short. A
 * timerfd did not do: on PREEMPT_RT it is a soft hrtimer, whose deadline
 * is not programmed while the CPU's softirqs are pending; an RT task's
 * sleep is a hard one. The keeper is below the ticker, so it never runs
 * in the ticker's way; on hardware it costs some twenty wake-ups per slot.
 * The keeper's timers are its CPU's: caught inside its timer interrupt
 * before it re-armed the next one, CPU 0 had none left, and CPU 1 ran on
 * for 290 us. Over the same span the other CPUs get a deadline every
 * KEEP_STEP_US too (pace.h), from an interrupt and nothing more.
 */
#define KEEP_STEP_US	25
#define KEEP_SPAN_US	300

static void *keeper_main(void *arg)
{
	struct ticker *t = arg;
	char why[200];
	/* It has the ticker's CPU and priority; one below, or (should that
	 * fail) the ticker's own, where it still waits for the ticker. */
	(void)rt_set_fifo(t->prio > 1 ? t->prio - 1 : 1, why, sizeof(why));
	int64_t period = (int64_t)t->period_us * 1000, step = KEEP_STEP_US * 1000LL;
	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		int64_t slot = clock_next_slot(t->origin_ns, clock_ns(CLOCK_MONOTONIC) + t->lead_ns,
					       period);
		bool paced = false;
		for (int64_t at = slot - t->lead_ns + step; at <= slot + KEEP_SPAN_US * 1000LL &&
		     at < slot - t->lead_ns + period; at += step) {
			struct timespec ts = clock_ns_ts(at);
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			if (!paced) {
				pace_on(&t->pace);
				paced = true;
			}
		}
		if (paced)
			pace_off(&t->pace);
	}
	return NULL;
}

static void *ticker_main(void *arg)
{
	struct start *s = arg;
	struct ticker *t = s->t;
	char why[200];
	if (rt_pin(t->cpu, why, sizeof(why)) < 0 || rt_set_fifo(t->prio, why, sizeof(why)) < 0) {
		snprintf(t->err, sizeof(t->err), "rt ticker: %s", why);
		s->rc = -1;
		sem_post(&s->ready);
		return NULL;
	}
	/* The keeper inherits this thread's CPU and priority. */
	int rc = pthread_create(&t->keeper, NULL, keeper_main, t);
	if (rc) {
		snprintf(t->err, sizeof(t->err), "rt ticker: its slot keeper: %s", strerror(rc));
		s->rc = -1;
		sem_post(&s->ready);
		return NULL;
	}
	s->rc = 0;
	sem_post(&s->ready);	/* s is gone after this */
	/* The schedule runs on CLOCK_MONOTONIC, the samples on CLOCK_REALTIME;
	 * nothing steps the guest's clock, so one offset maps the one onto the
	 * other. */
	int64_t to_real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC);
	/* Slots before the thread ran were never the ticker's to send. */
	int64_t period = (int64_t)t->period_us * 1000;
	int64_t due = clock_next_slot(t->origin_ns, clock_ns(CLOCK_MONOTONIC), period) - period;
	while (!__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE)) {
		due += period;
		/* Wake lead_us before the slot and wait for it on the clock: the
		 * ticker's own timer wake-up (an idle CPU's, under emulation at
		 * times a whole tick late) stays out of what it measures, unless
		 * it is later than the lead. It is measured apart. */
		struct timespec wake = clock_ns_ts(due - t->lead_ns);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, NULL) == EINTR)
			;
		int64_t now = clock_ns(CLOCK_MONOTONIC);
		int64_t late_us = (now - (due - t->lead_ns)) / 1000;
		hist_record(&t->wake_late, late_us < 0 ? 0 : late_us);
		while (now < due)
			now = clock_ns(CLOCK_MONOTONIC);
		/* After a stall the slots missed in it go out back to back, each
		 * stamped with its slot: the wait the ticker itself spent blocked
		 * in send() is part of what those datagrams suffered. */
		struct payload p = { .magic = MAGIC, .due_ns = due + to_real,
				     .sent_ns = clock_ns(CLOCK_REALTIME) };
		if (send(t->fd, &p, sizeof(p), MSG_DONTWAIT) == (ssize_t)sizeof(p))
			t->sent++;
		else
			t->send_errors++;
		drain(t);
	}
	/* The last echoes: the relay answers within a period when it runs. */
	struct timespec step = { 0, 10 * 1000 * 1000 };
	for (int i = 0; i < 20 && t->echoes < t->sent; i++) {
		nanosleep(&step, NULL);
		drain(t);
	}
	return NULL;
}

int ticker_start(struct ticker *t, int port, int cpu, int prio, int period_us,
		 int64_t origin_ns, int64_t over_us, int64_t list_us, int64_t lead_us,
		 char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->origin_ns = origin_ns;
	t->cpu = cpu;
	t->prio = prio;
	t->period_us = period_us;
	t->over_us = over_us;
	t->list_us = list_us;
	t->lead_ns = lead_us * 1000;
	t->late_cap = 8192;
	t->late = calloc((size_t)t->late_cap, sizeof(*t->late));
	if (!t->late || hist_init_us(&t->lat) < 0 || hist_init_us(&t->lat_sent) < 0 ||
	    hist_init_us(&t->wake_late) < 0) {
		snprintf(err, errlen, "rt ticker: out of memory");
		return -1;
	}
	int one = 1;
	t->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (t->fd < 0 || setsockopt(t->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0 ||
	    connect(t->fd, (struct sockaddr *)&to, sizeof(to)) < 0) {
		snprintf(err, errlen, "rt ticker: socket to 127.0.0.1:%d: %s", port, strerror(errno));
		if (t->fd >= 0)
			close(t->fd);
		return -1;
	}
	char why[200];
	if (pace_open(&t->pace, cpu, KEEP_STEP_US * 1000LL, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "rt ticker: %s", why);
		close(t->fd);
		return -1;
	}
	struct start s = { .t = t };
	sem_init(&s.ready, 0, 0);
	int rc = pthread_create(&t->thread, NULL, ticker_main, &s);
	if (rc != 0) {
		snprintf(err, errlen, "rt ticker: cannot start its thread: %s", strerror(rc));
		pace_close(&t->pace);
		close(t->fd);
		return -1;
	}
	while (sem_wait(&s.ready) < 0 && errno == EINTR)
		;
	if (s.rc < 0) {
		pthread_join(t->thread, NULL);
		snprintf(err, errlen, "%s", t->err);
		pace_close(&t->pace);
		close(t->fd);
		return -1;
	}
	t->started = true;
	return 0;
}

void ticker_stop(struct ticker *t)
{
	if (!t->started)
		return;
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
	pthread_join(t->thread, NULL);
	pthread_join(t->keeper, NULL);	/* within a period of the stop */
	t->paced_ns = pace_total_ns(&t->pace);
	pace_close(&t->pace);
	close(t->fd);
	t->started = false;
}

void ticker_free(struct ticker *t)
{
	hist_free(&t->lat);
	hist_free(&t->lat_sent);
	hist_free(&t->wake_late);
	free(t->late);
	t->late = NULL;
}
