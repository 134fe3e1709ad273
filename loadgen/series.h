/*
 * series: latency over time, one row per fixed window (100 ms by default),
 * for the over-time plot (docs/formats.md, *.timeseries.csv).
 *
 * A sample belongs to the window in which its reply arrived (as in an
 * HdrHistogram interval log), so windows only move forward: each thread
 * fills its current window and hands it over when time moves on; a window
 * is final once every thread has moved past it. Memory stays bounded by the
 * few windows in flight, whatever the run's length.
 */
#ifndef LOADGEN_SERIES_H
#define LOADGEN_SERIES_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"
#include "results.h"

struct series {
	pthread_mutex_t mu;
	int64_t start_ns, window_ns;
	int nthreads;
	int64_t *thread_win;	/* each thread's current window */
	struct hist *pending;	/* windows [base, base + npending) */
	int64_t base;
	int npending;
	struct results_window *rows; /* final windows [0, nrows) */
	int64_t nrows, cap;
};

/* One thread's side: its current window. */
struct series_local {
	struct series *s;
	int idx;
	int64_t win;
	struct hist h;
};

/* Returns 0, or -1 (ENOMEM). */
int series_init(struct series *s, int64_t start_ns, int64_t window_ns,
		int nthreads);
void series_free(struct series *s);

/* Thread idx's handle; call from that thread only. Returns 0 or -1. */
int series_local_init(struct series_local *l, struct series *s, int idx);
void series_local_free(struct series_local *l);

/* Record latency value_us for a reply that arrived at now_ns. */
void series_record(struct series_local *l, int64_t now_ns, int64_t value_us);

/* Tell the series time has reached now_ns (hands over finished windows even
 * when no reply came). */
void series_tick(struct series_local *l, int64_t now_ns);

/* The thread is done: hand everything over. */
void series_finish(struct series_local *l);

/* Write the CSV: comment lines from header (may be NULL; each line gets
 * "# "), the column line, then every final window up to end_ns.
 * Returns 0, or -1 on a write error. */
int series_write_csv(const struct series *s, FILE *out, const char *header,
		     int64_t end_ns);

#endif
