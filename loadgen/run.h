/*
 * run: one load run from start to results: the cgroup and pinning, the
 * flows and a probe that the target answers, the sender threads, the live
 * progress line, SIGINT, and the merged results.
 */
#ifndef LOADGEN_RUN_H
#define LOADGEN_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"
#include "hist.h"
#include "opts.h"
#include "series.h"
#include "slow.h"

struct run_result {
	double target_rate, achieved_rate;
	bool rate_ok;			/* achieved at least 99 % of target */
	double duration_s;		/* asked for */
	double send_span_s;		/* first intended to last actual send */
	double elapsed_s;		/* the whole run, drain included */
	double start_unix_s;		/* the first intended send, wall clock */
	uint64_t expected;		/* packets the schedule holds */
	uint64_t sent, received, lost, duplicated, reordered, late, foreign;
	uint64_t send_errors, refused;
	bool interrupted;
	struct hist corrected, uncorrected, sched_err;
	struct slow slow;		/* --list-over-us: the slow replies */
	struct series series;		/* valid when has_series */
	bool has_series;
	int64_t series_end_ns;
	/* the quota and what it did (cg.path empty: none) */
	struct {
		char path[4096];
		int version;
		bool threads_only;
		int64_t quota_us, period_us;
		struct cg_stat stat;	/* during the run */
	} cgroup;
	/* --watch-cgroup: another cgroup's throttling during the run */
	struct {
		char path[4096];	/* empty: none watched */
		struct cg_stat stat;
	} watched;
	double cpu_user_s, cpu_sys_s;
};

/* Run once at rate pps under quota_pct (< 0: none) with the rest of o.
 * Fills r (release with run_result_free) and returns 0, or an exit status
 * (sysexits) with err filled; 130 when interrupted (r is filled). */
int run_once(const struct opts *o, double rate, double quota_pct,
	     struct run_result *r, char *err, size_t errlen);

void run_result_free(struct run_result *r);

/* Install the SIGINT/SIGTERM handling run_once relies on. */
void run_signals(void);

/* True once SIGINT or SIGTERM came. */
bool run_interrupted(void);

#endif
