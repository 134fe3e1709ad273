/*
 * sched: the fixed send schedule of an open-loop sender.
 *
 * The run sends N = rate * duration packets; packet g (0..N-1) is due at
 * start + g / rate. Thread k of T sends g = k, k + T, k + 2T, ..., so the
 * threads interleave on one global schedule and their packets never drift
 * apart. Times are CLOCK_MONOTONIC nanoseconds; the arithmetic is exact
 * integer math, so a long run accumulates no rounding.
 */
#ifndef LOADGEN_SCHED_H
#define LOADGEN_SCHED_H

#include <stdint.h>

struct sched {
	int64_t start_ns;	/* when packet 0 is due */
	double rate;		/* packets per second, all threads together */
	uint64_t stride;	/* T */
	uint64_t offset;	/* k */
	uint64_t count;		/* packets this thread sends */
	uint64_t next;		/* index (0..count) of the next one to send */
};

/* Packets in the whole run: rate * duration, rounded down, at least 1. */
uint64_t sched_total(double rate, double duration_s);

/* Set s up as thread k of T for a run of total packets. */
void sched_init(struct sched *s, int64_t start_ns, double rate, uint64_t total,
		uint64_t k, uint64_t T);

/* Intended send time of this thread's packet i. */
int64_t sched_intended(const struct sched *s, uint64_t i);

/* How many packets are due at now and not yet sent (0 when none). */
uint64_t sched_due(const struct sched *s, int64_t now_ns);

/* Intended time of the next packet to send; INT64_MAX when all are sent. */
int64_t sched_next_time(const struct sched *s);

/* When to wake for the next packet when the last early_ns before it are
 * busy-waited: its intended time minus early_ns; INT64_MAX when all are
 * sent. */
int64_t sched_wake_time(const struct sched *s, int64_t early_ns);

/* How long to busy-wait at now for the next packet: the time left to its
 * intended time, at most max_ns; 0 when it is due or all are sent. */
int64_t sched_spin_ns(const struct sched *s, int64_t now_ns, int64_t max_ns);

/* Mark n packets sent (n <= what sched_due returned). */
void sched_advance(struct sched *s, uint64_t n);

#endif
