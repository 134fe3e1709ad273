/*
 * probe: notices when the emulated guest (or one vCPU of it) stops running.
 * A SCHED_FIFO thread above everything else of the scenario sleeps on a hard
 * timer every period; a wake-up later than min_late is a freeze of its CPU
 * (a QEMU vCPU thread the busy host did not run), recorded as an interval
 * of CLOCK_REALTIME (the clock of the ticker's samples). It takes no lock
 * the demo is about, but a stock kernel stalled by the inversion can still
 * hold it off: the blocked RT ticker holds its CPU's softirq lock, and the
 * softirq work of that CPU waits with it (main.c counts the freezes inside
 * stalls apart).
 */
#ifndef DEMO_PROBE_H
#define DEMO_PROBE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct freeze {
	int64_t from_ns, to_ns;	/* CLOCK_REALTIME */
};

struct probe {
	int cpu, prio, period_us;
	int64_t origin_ns;		/* its wake-ups are origin_ns + k * period */
	int64_t min_late_ns;
	pthread_t thread;
	bool started;
	int stop;			/* set to 1 to end it (atomic) */
	struct freeze *ev;
	int nev, cap;
	uint64_t wakes, lost;		/* lost: freezes past cap */
	int64_t max_late_ns, total_ns;
	char err[256];
};

/* Start it on cpu at SCHED_FIFO prio, waking at origin_ns (CLOCK_MONOTONIC)
 * plus whole periods. Returns 0, or -1 with err filled. */
int probe_start(struct probe *p, int cpu, int prio, int period_us, int64_t origin_ns,
		int64_t min_late_ns, char *err, size_t errlen);
void probe_stop(struct probe *p);
void probe_free(struct probe *p);

/* How much of [from, to] (CLOCK_REALTIME ns) any of the n probes saw as
 * frozen (the union of their intervals). */
int64_t probe_frozen_ns(const struct probe *const *p, int n, int64_t from, int64_t to);

#endif
