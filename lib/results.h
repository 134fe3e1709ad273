/*
 * results: the pieces of the docs/formats.md result files that relay,
 * loadgen and the model write alike: the JSON percentile object, .hgrm
 * files and the rows of a *.timeseries.csv. How each program cuts its
 * samples into windows stays its own (threads, allocation, ring buffers);
 * what a window says and how it is written is here.
 */
#ifndef RELAY_RESULTS_H
#define RELAY_RESULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

/* The docs/formats.md percentile object of h: p50 p90 p99 p99_9 p99_99 max
 * count (integers) and mean (to 0.1), in that order. New reference. */
json_t *results_percentiles(const struct hist *h);

/* Write h to f in the docs/formats.md .hgrm format. Returns 0 or -1. */
int results_hgrm(const struct hist *h, FILE *f);

/* Write h to path as a docs/formats.md .hgrm file (ms, 5 ticks), by newfile
 * (a symlink at path is replaced, never followed). Returns 0, or -1 with err
 * filled ("PATH: reason"). */
int results_write_hgrm(const struct hist *h, const char *path, char *err,
		       size_t errlen);

/* One window of a time series: its sample count and latencies (us; 0 and
 * written as empty cells when count is 0). */
struct results_window {
	uint64_t count;
	int64_t p50_us, p99_us, max_us;
};

/* Summarise h as one window. */
void results_window_of(struct results_window *w, const struct hist *h);

/* Write text as comment lines: "# " before each of its lines (NULL: none). */
void results_comment(FILE *out, const char *text);

/* Write the comment lines and the column line of a *.timeseries.csv:
 * t_s,count,p50_us,p99_us,max_us, then extra_columns (NULL, or e.g.
 * ",rx_count,rx_p50_us,rx_p99_us,rx_max_us"). */
void results_series_header(FILE *out, const char *comment,
			   const char *extra_columns);

/* Write the row of window index (0-based, window_ns long; t_s is its end):
 * w's cells, then extra's (NULL: none) for the extra columns. */
void results_series_row(FILE *out, int64_t index, int64_t window_ns,
			const struct results_window *w,
			const struct results_window *extra);

#endif
