/*
 * sweep: capacity planning. One run per step over a range of rates (or of
 * quotas at one rate); a step meets the SLO when every objective holds, the
 * achieved rate is within 1 % of the target and at most 0.1 % of the
 * packets are lost. Reports the highest rate (lowest quota) that meets it.
 */
#ifndef LOADGEN_SWEEP_H
#define LOADGEN_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "opts.h"
#include "run.h"

/* The value of step i of o's sweep (a rate or a quota percentage). */
double sweep_value(const struct opts *o, int i);

/* Does r meet every objective of o (and the rate and loss rules)? */
bool sweep_meets(const struct opts *o, const struct run_result *r);

/* Run the sweep, print a row per step and write --json and --csv.
 * Returns an exit status with err filled when it is not 0. */
int sweep_run(const struct opts *o, char *err, size_t errlen);

#endif
