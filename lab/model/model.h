/*
 * model: one run of the ready-list locking protocol in user space.
 *
 * Producer threads (SCHED_OTHER, in a cgroup with a CPU quota) loop taking
 * the lock shared and holding it for a short critical section, as
 * ep_poll_callback does on every wake-up. A SCHED_FIFO consumer wakes every
 * tick, takes the lock exclusive, as ep_poll does, and records how long that
 * took. Everything runs on one CPU, so whenever the quota runs out the
 * throttled producers are almost always inside their critical section, and
 * the consumer's wait shows what the lock kind does about it.
 */
#ifndef RELAY_MODEL_H
#define RELAY_MODEL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "hist.h"
#include "mseries.h"
#include "rlock.h"

/* Waits above this count as the stall the kernel bug causes: the smallest
 * quota wait, well above any scheduling noise of a loaded host. */
#define MODEL_STALL_US 50000

struct model_params {
	int64_t duration_ns;	/* per variant */
	int64_t quota_us;	/* cpu.max of the producers' cgroup */
	int64_t period_us;
	int producers;
	int cpu;		/* the one CPU producers and consumer share */
	int prio;		/* the consumer's SCHED_FIFO priority */
	int64_t tick_us;	/* the consumer takes the lock this often */
	int64_t hold_us;	/* a producer's critical section */
	int64_t gap_us;		/* a producer's work outside the lock */
	int64_t window_us;	/* time series window */
};

struct model_result {
	enum rlock_kind kind;
	struct hist waits;	/* the consumer's waits for the lock, us */
	struct mseries series;
	uint64_t sections;	/* critical sections the producers completed */
	struct cg_stat cg;	/* the producers' throttling during the run */
	bool cg_stat_ok;	/* cg holds a reading */
	int64_t elapsed_ns;
	int signo;		/* the signal that ended the run early, or 0 */
};

/* The defaults the command line starts from. */
void model_defaults(struct model_params *p);

/* Run kind for p->duration_ns with the producers in cg (whose quota the
 * caller has set). Returns when the time is up or one of sigs (blocked in
 * every thread by the caller) arrives. r is initialised here; release it with
 * model_result_free, also after a failure. Returns 0, or an exit status of docs/formats.md
 * (EX_OSERR: the system refused pinning, SCHED_FIFO or the cgroup;
 * EX_SOFTWARE: a lock or thread call failed) with err filled. */
int model_run(const struct model_params *p, enum rlock_kind kind,
	      struct cg *cg, const sigset_t *sigs, struct model_result *r,
	      char *err, size_t errlen);

void model_result_free(struct model_result *r);

#endif
