/*
 * ticker: a real-time client of the relay. A SCHED_FIFO thread sends the
 * relay a datagram every period, timed by clock_nanosleep: its wake-ups are
 * hard timers and do not wait for ksoftirqd, and its send path takes the
 * relay's ready-list lock as an RT waker.
 *
 * It is the RT peer the fix is about: on the stock kernel it queues behind
 * the throttled sender like every reader (rwlock readers get no priority
 * inheritance); on the patched kernel it boosts the sender out of the lock.
 * Without it the relay's only wake-ups would be the throttled senders and
 * its timerfd, a softirq that waits while a throttled sender holds the
 * CPU's softirq lock, which even the fix cannot hurry.
 *
 * It also measures what it suffers: each datagram carries the time its
 * slot in the schedule was due (CLOCK_REALTIME), the relay echoes it, and
 * the kernel's receive timestamp of the echo (SO_TIMESTAMPNS, taken when
 * the relay sends it back on loopback) minus that time is one sample: how
 * long an RT datagram waited for the RT relay. Independent of when the
 * ticker reads the echo, and of coordinated omission: on the stock kernel
 * the ticker's own send() blocks for the whole stall (an rwlock reader
 * behind the relay's pending writer), so timing from the send would count
 * one late datagram per stall and hide the ~stall/period slots it could
 * not send. Send to echo is kept beside it (lat_sent, over_sent) to show
 * the difference.
 */
#ifndef DEMO_TICKER_H
#define DEMO_TICKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "pace.h"

struct ticker {
	int fd;
	int cpu, prio, period_us;
	int64_t origin_ns;	/* the first slot */
	int64_t over_us;	/* samples above this are counted in over */
	int64_t list_us;	/* samples above this are kept in late[] */
	int64_t lead_ns;	/* wakes this long before each slot */
	pthread_t thread;
	pthread_t keeper;	/* hard timers while a datagram is out (ticker.c) */
	struct pace pace;	/* and the other CPUs' deadlines meanwhile */
	int64_t paced_ns;	/* how long they were on, summed (at the stop) */
	bool started;
	int stop;		/* set to 1 to end it (atomic) */
	uint64_t sent, send_errors, echoes, foreign;
	uint64_t over, over_sent;	/* samples above over_us: due to echo, send to echo */
	struct hist lat;	/* due to echo, us */
	struct hist lat_sent;	/* send to echo, us (blind to coordinated omission) */
	struct hist wake_late;	/* its own timer wake-up's lateness, us */
	struct ticker_late { int64_t due_ns, rx_ns; } *late;	/* the first samples over list_us */
	int nlate, late_cap;
	char err[256];		/* why the thread could not start */
};

/* Start the thread sending to 127.0.0.1:port from cpu at SCHED_FIFO prio,
 * its slots at origin_ns (CLOCK_MONOTONIC) plus whole periods; samples
 * above over_us are counted in t->over (and t->over_sent), the first 8192
 * above list_us kept in t->late. It wakes lead_us before each slot and
 * waits for it on the clock. Returns 0, or -1 with err filled (no socket,
 * no RT priority). */
int ticker_start(struct ticker *t, int port, int cpu, int prio, int period_us,
		 int64_t origin_ns, int64_t over_us, int64_t list_us, int64_t lead_us,
		 char *err, size_t errlen);

/* Stop it, collect the echoes still in flight (up to 200 ms), wait for it
 * and close its socket (safe when never started). The histogram stays
 * until ticker_free. */
void ticker_stop(struct ticker *t);
void ticker_free(struct ticker *t);

#endif
