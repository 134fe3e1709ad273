/*
 * msum: the model's results as files (docs/formats.md), a terminal table and
 * a one-line verdict.
 *
 *   <variant>.hgrm             percentile distribution of the waits, ms
 *   <variant>.timeseries.csv   per window: count, p50, p99, max of the waits
 *   <variant>.events.csv       every wait over MODEL_STALL_US, as a "stall"
 *   summary.json               one object per variant, "params", "verdict"
 */
#ifndef RELAY_MSUM_H
#define RELAY_MSUM_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* A PI lock should never show a wait above this. */
#define MSUM_PI_LIMIT_US 20000

/* Number of values in h above us. */
uint64_t msum_over(const struct hist *h, int64_t us);

/* Write r's .hgrm, .timeseries.csv and .events.csv into dir. Returns 0, or -1 with err
 * filled. */
int msum_write_variant(const char *dir, const struct model_params *p,
		       const struct model_result *r, char *err, size_t errlen);

/* The verdict line: every variant's worst wait and the ratio of the
 * rwlock's to the PI mutex's, with what it means. */
void msum_verdict(char *buf, size_t len, const struct model_result *rs, int n);

/* The summary object: one member per variant, "params" and "verdict". */
json_t *msum_json(const struct model_params *p, int cgroup_version,
		  const struct model_result *rs, int n, const char *verdict);

/* Write msum_json's object to dir/summary.json. Returns 0, or -1 with err
 * filled. */
int msum_write_json(const char *dir, json_t *summary, char *err, size_t errlen);

/* Print the table of the variants and the verdict. */
void msum_table(FILE *out, const struct model_result *rs, int n,
		const char *verdict);

#endif
