/*
 * hist: a High Dynamic Range histogram (the HdrHistogram bucket layout).
 *
 * Values are integers in a caller-chosen unit (relay and loadgen record
 * microseconds). Buckets are log-linear: every power-of-two range is split
 * into enough linear sub-buckets to keep the given number of significant
 * decimal digits, so recording is O(1), memory is fixed at init and two
 * histograms of the same shape merge by adding counts.
 *
 * Concurrency: one thread records into a histogram; any number of threads may
 * read it (hist_merge, hist_count) at the same time and see a slightly stale
 * but never torn copy. Counters are updated with relaxed atomics for that.
 */
#ifndef RELAY_HIST_H
#define RELAY_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct hist {
	int64_t lowest;		/* smallest value told apart from 0 */
	int64_t highest;	/* larger values are clamped and counted in overflow */
	int sigfigs;		/* significant decimal digits kept (1..5) */
	int unit_magnitude;	/* log2(lowest) */
	int sub_bucket_half_count_magnitude;
	int32_t sub_bucket_count;
	int32_t sub_bucket_half_count;
	int64_t sub_bucket_mask;
	int32_t bucket_count;
	int32_t counts_len;
	uint64_t *counts;
	uint64_t total;
	uint64_t overflow;	/* values recorded above highest */
	int64_t min;
	int64_t max;
};

/* Prepare h for values in [lowest, highest] with sigfigs digits (1..5).
 * Returns 0, or -1 with errno EINVAL (bad range) or ENOMEM. */
int hist_init(struct hist *h, int64_t lowest, int64_t highest, int sigfigs);

/* The length of the counts array hist_init would allocate for these
 * settings, without allocating it; -1 (errno EINVAL) for a bad range. */
int32_t hist_slots(int64_t lowest, int64_t highest, int sigfigs);

/* The shape relay, loadgen and the model share: 1 us .. 10 s, 3 digits. */
int hist_init_us(struct hist *h);

/* Release the counts array; h may be initialised again afterwards. */
void hist_free(struct hist *h);

/* Forget every recorded value; keeps the shape. */
void hist_reset(struct hist *h);

/* Record value (negative counts as 0; above highest is clamped to highest
 * and counted in h->overflow). Never allocates. */
void hist_record(struct hist *h, int64_t value);

/* Record value n times. */
void hist_record_n(struct hist *h, int64_t value, uint64_t n);

/* Add every count of src to dst; both must have the same shape.
 * Returns 0, or -1 with errno EINVAL when the shapes differ. */
int hist_merge(struct hist *dst, const struct hist *src);

/* Add n values to counts slot index (0 .. counts_len - 1), as a decoder of
 * the HdrHistogram counts array does; min and max follow. Returns 0, or -1
 * (errno EINVAL) when index is outside the array. */
int hist_add_at(struct hist *h, int32_t index, uint64_t n);

/* Number of values recorded. */
uint64_t hist_count(const struct hist *h);

/* Number of values recorded that are <= value (for cumulative buckets). */
uint64_t hist_count_le(const struct hist *h, int64_t value);

/* The value at percentile p (0..100): the highest value equivalent to the
 * bucket that holds it, as HdrHistogram reports it. 0 when empty. */
int64_t hist_percentile(const struct hist *h, double p);

/* Smallest and largest recorded value (0 when empty). */
int64_t hist_min(const struct hist *h);
int64_t hist_max(const struct hist *h);

/* Arithmetic mean and standard deviation of the recorded values. */
double hist_mean(const struct hist *h);
double hist_stddev(const struct hist *h);

/* Write the HdrHistogram percentile distribution ("hgrm") text: the table
 * the public HdrHistogram plotter reads, values divided by scale (1.0 keeps
 * the recorded unit), ticks rows per halving of the distance to 100 %
 * (HdrHistogram uses 5). Returns 0, or -1 on a write error. */
int hist_write_hgrm(const struct hist *h, FILE *out, double scale, int ticks);

/* One row of the percentile distribution, as hist_write_hgrm prints it. */
struct hist_pct_row {
	int64_t value;
	double percentile;	/* 0..100 */
	uint64_t cumulative;
};

/* Call fn for each row of the percentile distribution (ticks as above);
 * stops early and returns fn's value when fn returns non-zero. */
int hist_foreach_percentile(const struct hist *h, int ticks,
			    int (*fn)(const struct hist_pct_row *row, void *arg),
			    void *arg);

#endif
