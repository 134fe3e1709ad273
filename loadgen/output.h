/*
 * output: a run's results as the terminal table (wrk2's percentile rows for
 * corrected and uncorrected latency, the counters and the throttling the
 * quota caused), as JSON (docs/formats.md percentile objects) and as files:
 * hgrm distributions and the time series CSV.
 */
#ifndef LOADGEN_OUTPUT_H
#define LOADGEN_OUTPUT_H

#include <jansson.h>
#include <stdio.h>

#include "hist.h"
#include "opts.h"
#include "run.h"

/* The percentile rows every table and JSON object carries. */
extern const double output_pcts[6];
extern const char *const output_pct_keys[6];

/* Print the summary table of r to out. */
void output_table(FILE *out, const struct opts *o, const struct run_result *r);

/* The whole result as a JSON object (new reference). */
json_t *output_json(const struct opts *o, const struct run_result *r);

/* Write j to path (indented, newline at the end). Returns 0, or -1 with
 * err filled. */
int output_write_json(const char *path, json_t *j, char *err, size_t errlen);

/* path with ".uncorrected" put before a ".hgrm" ending (or appended). */
void output_uncorrected_path(const char *path, char *out, size_t len);

/* Write r's corrected (untagged) and uncorrected (Tag=uncorrected)
 * histograms as one interval each of an HdrHistogram log. Returns 0, or
 * -1 with err filled. */
int output_write_hlog(const char *path, const struct opts *o,
		      const struct run_result *r, char *err, size_t errlen);

/* Write the time series CSV of r. Returns 0, or -1 with err filled. */
int output_write_series(const char *path, const struct opts *o,
			const struct run_result *r, char *err, size_t errlen);

/* Every file o asks for. Returns 0, or -1 with err filled (the rest are
 * still written). */
int output_files(const struct opts *o, const struct run_result *r, char *err,
		 size_t errlen);

#endif
