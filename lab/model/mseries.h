/*
 * mseries: the consumer's waits over time, for the plots: cut into fixed
 * windows for the *.timeseries.csv file (docs/formats.md: per window the
 * count, p50, p99 and max), and every wait above a stall threshold listed
 * for the *.events.csv file. A window the consumer spent blocked holds no
 * sample at all; the stall events are what marks it.
 *
 * Every row is allocated up front so that recording from the RT consumer
 * never allocates.
 */
#ifndef RELAY_MSERIES_H
#define RELAY_MSERIES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"
#include "results.h"

struct mseries_stall {
	int64_t t_ns;		/* when the wait began, since the start */
	int64_t wait_us;
};

struct mseries {
	int64_t window_ns;
	size_t cap;		/* rows allocated: every window of the run */
	size_t nrows;		/* windows closed so far */
	struct results_window *rows;
	struct hist cur;	/* the open window, rows[nrows] when closed */
	int64_t stall_us;	/* longer waits are stalls too */
	size_t nstalls, stalls_cap;
	struct mseries_stall *stalls;
};

/* Prepare s for windows of window_us over a run of duration_ns, listing
 * waits over stall_us. Returns 0, or -1 with errno set (EINVAL, ENOMEM). */
int mseries_init(struct mseries *s, int64_t window_us, int64_t duration_ns,
		 int64_t stall_us);

/* Record a wait of value_us that began t_ns after the start of the run.
 * Closes the windows before t_ns; times past the end count in the last one. */
void mseries_record(struct mseries *s, int64_t t_ns, int64_t value_us);

/* Close every window up to end_ns (the run's length). */
void mseries_finish(struct mseries *s, int64_t end_ns);

/* Write the CSV: comment lines (each line of comment, prefixed "# "), the
 * header, one row per closed window. Returns 0, or -1 on a write error. */
int mseries_write_csv(const struct mseries *s, FILE *out, const char *comment);

/* Write the stalls as an events CSV (kind "stall", the wait as its
 * duration), comment as above. Returns 0, or -1 on a write error. */
int mseries_write_events(const struct mseries *s, FILE *out,
			 const char *comment);

/* Release the rows; s may be initialised again afterwards. */
void mseries_free(struct mseries *s);

#endif
