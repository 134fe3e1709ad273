/*
 * sweep: capacity planning. One run per step over a range of rates (or of
 * quotas at one rate), or a search for the capacity (search.h decides its
 * rates). A run meets the SLO when every objective holds, the achieved
 * rate is within 1 % of the target and no datagram was lost (nor failed
 * to send, nor was refused); one that did not says why. A sweep's
 * capacity is the highest rate (lowest quota) up to which every step met
 * it; a sweep where a step failed below one that met is not monotonic: its
 * unsettled steps run again and the spread they showed is reported, and
 * the capacity stays where every run of every easier step met.
 */
#ifndef LOADGEN_SWEEP_H
#define LOADGEN_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opts.h"
#include "run.h"

/* Why a run did not meet the SLO, as loadgen can tell: the first that
 * applies, in this order. */
enum sweep_cause {
	SWEEP_MET,
	SWEEP_INTERRUPTED,
	SWEEP_THROTTLED,	/* the --watch-cgroup was throttled meanwhile */
	SWEEP_LOSS,		/* sent without a reply, or not sent at all */
	SWEEP_SENDER,		/* loadgen fell short of the rate while the
				 * target kept up (its objectives held on
				 * the latency from the actual sends) */
	SWEEP_OBJECTIVE,	/* a percentile over its limit */
};

/* What one run of one step measured, as far as the verdict needs it. */
struct sweep_run {
	int pos;		/* the step's place, easiest (0) to hardest;
				 * in a search, the search's number */
	double rate, achieved;	/* target and achieved pps */
	bool meets;
	enum sweep_cause cause;
	bool saturated;		/* lost datagrams: the target stopped keeping
				 * up (the knee); a missed rate is the sender's */
	char why[192];		/* why it did not meet; "" when it did */
	char sat_why[192];	/* why it counts as saturated */
	int64_t slo_us[OPTS_MAX_SLO];	/* each objective's percentile */
};

/* The conclusion over all runs of npos steps. */
struct sweep_verdict {
	int capacity;		/* last position up to which every run met; -1 */
	int first_fail;		/* first position with a run not met; -1 */
	int last_met;		/* last position where every run met; -1 */
	bool monotonic;		/* no failed position below a met one */
	int knee;		/* first position where every run saturated; -1 */
};

/* The value of step i of o's sweep (a rate or a quota percentage). */
double sweep_value(const struct opts *o, int i);

/* The step index at position pos, easiest first: ascending rates,
 * descending quotas. */
int sweep_step_at(const struct opts *o, int pos);

/* The cause's word for the JSON and the rows ("loss"); NULL for
 * SWEEP_MET. */
const char *sweep_cause_name(enum sweep_cause c);

/* Judge one run r at position pos into s: the objectives, the rate and
 * the loss rule, the cause of a miss, and whether the target saturated. */
void sweep_judge_run(const struct opts *o, const struct run_result *r,
		     int pos, struct sweep_run *s);

/* The verdict over n runs of npos positions. */
void sweep_verdict(const struct sweep_run *runs, int n, int npos,
		   struct sweep_verdict *v);

/* Run the sweep (or the searches), print a row per run and the verdict,
 * write --json, --csv and --hgrm. Returns an exit status with err filled
 * when it is not 0. */
int sweep_run(const struct opts *o, char *err, size_t errlen);

#endif
