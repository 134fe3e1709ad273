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

/*
 * The model's parameters, each written once: epmodel's flags
 * (--name-with-dashes), its usage and defaults (mflags.c), the keys of a
 * run spec's "model" object, --describe and the "params" of summary.json
 * come from this table. The quota is a percentage of one CPU per period,
 * like the demo's cpu_quota_pct (lab/README.md).
 *
 * X(name, min, max, default, arg, spec, help); spec: the lab's name for
 * the parameter where the model's differs (lab/README.md), else NULL.
 */
#define MODEL_PARAMS(X) \
	X(duration_s, 1, 3600, 3, "S", NULL, "seconds per lock kind") \
	X(cpu_quota_pct, 1, 100, 5, "PCT", NULL, \
	  "the producers' cpu.max quota, % of one CPU per\nperiod") \
	X(period_us, 1000, 1000000, 100000, "US", NULL, "the cpu.max period") \
	X(producers, 1, 64, 2, "N", "senders", "producer threads") \
	X(cpu, -1, 1023, -1, "N", NULL, \
	  "the CPU everything runs on; -1: the last one allowed") \
	X(consumer_prio, 1, 99, 50, "N", NULL, "the consumer's SCHED_FIFO priority") \
	X(tick_us, 50, 1000000, 1000, "US", NULL, \
	  "the consumer takes the lock this often") \
	X(hold_us, 0, 100000, 20, "US", NULL, "a producer's critical section") \
	X(gap_us, 0, 100000, 2, "US", NULL, "a producer's work between sections") \
	X(window_us, 1000, 10000000, 100000, "US", NULL, "the time series' window")

struct model_params {
#define MODEL_PARAM_FIELD(name, min, max, def, arg, spec, help) int name;
	MODEL_PARAMS(MODEL_PARAM_FIELD)
#undef MODEL_PARAM_FIELD
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

/* The table's defaults. */
void model_defaults(struct model_params *p);

/* Run kind for p->duration_s with the producers in cg (whose quota the
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
