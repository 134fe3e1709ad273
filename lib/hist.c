/*
 * hist: HdrHistogram bucket arithmetic, written for one recording thread and
 * any number of concurrent readers.
 *
 * Layout: bucket 0 holds sub_bucket_count linear slots of width 1 << unit;
 * each further bucket covers twice the range with half as many new slots
 * (its lower half overlaps the previous bucket and is not stored), so the
 * counts array is (bucket_count + 1) * sub_bucket_half_count long.
 */
#include "hist.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* Single writer: a load and a store, not a locked read-modify-write. */
#define BUMP(p, n)	STORE((p), LOAD(p) + (n))

static int ilog2_floor(uint64_t v)
{
	return 63 - __builtin_clzll(v);
}

/* Everything of h but its counts array. */
static int layout(struct hist *h, int64_t lowest, int64_t highest, int sigfigs)
{
	memset(h, 0, sizeof(*h));
	/* highest / 2: lowest may be near INT64_MAX (a decoded log) */
	if (lowest < 1 || sigfigs < 1 || sigfigs > 5 || highest / 2 < lowest) {
		errno = EINVAL;
		return -1;
	}
	int64_t single_unit_range = 2;
	for (int i = 0; i < sigfigs; i++)
		single_unit_range *= 10;
	int sub_bucket_count_magnitude =
		(int)ceil(log2((double)single_unit_range));

	h->lowest = lowest;
	h->highest = highest;
	h->sigfigs = sigfigs;
	h->unit_magnitude = ilog2_floor((uint64_t)lowest);
	h->sub_bucket_half_count_magnitude = sub_bucket_count_magnitude - 1;
	h->sub_bucket_count = 1 << sub_bucket_count_magnitude;
	h->sub_bucket_half_count = h->sub_bucket_count / 2;
	/* before the mask: its shift must not overflow (lowest near 2^63
	 * from a decoded log) */
	if (h->unit_magnitude + h->sub_bucket_half_count_magnitude > 61) {
		errno = EINVAL;
		return -1;
	}
	h->sub_bucket_mask = ((int64_t)h->sub_bucket_count - 1)
			     << h->unit_magnitude;

	int64_t trackable = (int64_t)h->sub_bucket_count << h->unit_magnitude;
	int buckets = 1;
	while (trackable <= highest) {
		if (trackable > INT64_MAX / 2) {
			buckets++;
			break;
		}
		trackable <<= 1;
		buckets++;
	}
	h->bucket_count = buckets;
	h->counts_len = (buckets + 1) * h->sub_bucket_half_count;
	return 0;
}

int32_t hist_slots(int64_t lowest, int64_t highest, int sigfigs)
{
	struct hist h;
	return layout(&h, lowest, highest, sigfigs) < 0 ? -1 : h.counts_len;
}

int hist_init(struct hist *h, int64_t lowest, int64_t highest, int sigfigs)
{
	if (layout(h, lowest, highest, sigfigs) < 0)
		return -1;
	h->counts = calloc((size_t)h->counts_len, sizeof(*h->counts));
	if (!h->counts) {
		errno = ENOMEM;
		return -1;
	}
	h->min = INT64_MAX;
	return 0;
}

int hist_init_us(struct hist *h)
{
	return hist_init(h, 1, 10 * 1000 * 1000, 3);
}

void hist_free(struct hist *h)
{
	free(h->counts);
	h->counts = NULL;
}

static int bucket_index(const struct hist *h, int64_t value)
{
	int pow2ceiling = 64 - __builtin_clzll((uint64_t)(value | h->sub_bucket_mask));
	return pow2ceiling - h->unit_magnitude -
	       (h->sub_bucket_half_count_magnitude + 1);
}

static int32_t counts_index(const struct hist *h, int64_t value)
{
	int b = bucket_index(h, value);
	int32_t sub = (int32_t)(value >> (b + h->unit_magnitude));
	int32_t base = (b + 1) << h->sub_bucket_half_count_magnitude;
	return base + (sub - h->sub_bucket_half_count);
}

void hist_reset(struct hist *h)
{
	/* Only the slots between the extremes recorded can hold counts. The
	 * relay's RT loop resets two window histograms every 100 ms: all
	 * 15360 slots each cost it some 0.1 ms of an emulated CPU, in the
	 * path of whatever datagram came then; a window of microsecond
	 * latencies touches a few hundred. (The writer resets its own
	 * histogram, so its extremes cover its counts.) */
	if (LOAD(&h->total)) {
		int32_t last = counts_index(h, LOAD(&h->max));
		for (int32_t i = counts_index(h, LOAD(&h->min)); i <= last; i++)
			STORE(&h->counts[i], 0);
	}
	STORE(&h->total, 0);
	STORE(&h->overflow, 0);
	STORE(&h->min, INT64_MAX);
	STORE(&h->max, 0);
}

static int64_t value_at_index(const struct hist *h, int32_t index)
{
	int b = (index >> h->sub_bucket_half_count_magnitude) - 1;
	int32_t sub = (index & (h->sub_bucket_half_count - 1)) +
		      h->sub_bucket_half_count;
	if (b < 0) {
		sub -= h->sub_bucket_half_count;
		b = 0;
	}
	return (int64_t)sub << (b + h->unit_magnitude);
}

static int64_t equivalent_range(const struct hist *h, int64_t value)
{
	int b = bucket_index(h, value);
	int32_t sub = (int32_t)(value >> (b + h->unit_magnitude));
	if (sub >= h->sub_bucket_count)
		b++;
	return (int64_t)1 << (h->unit_magnitude + b);
}

static int64_t lowest_equivalent(const struct hist *h, int64_t value)
{
	int b = bucket_index(h, value);
	int64_t sub = value >> (b + h->unit_magnitude);
	return sub << (b + h->unit_magnitude);
}

static int64_t highest_equivalent(const struct hist *h, int64_t value)
{
	return lowest_equivalent(h, value) + equivalent_range(h, value) - 1;
}

static void note_extremes(struct hist *h, int64_t value)
{
	if (value < LOAD(&h->min))
		STORE(&h->min, value);
	if (value > LOAD(&h->max))
		STORE(&h->max, value);
}

void hist_record_n(struct hist *h, int64_t value, uint64_t n)
{
	if (value < 0)
		value = 0;
	if (value > h->highest) {
		value = h->highest;
		BUMP(&h->overflow, n);
	}
	BUMP(&h->counts[counts_index(h, value)], n);
	BUMP(&h->total, n);
	note_extremes(h, value);
}

void hist_record(struct hist *h, int64_t value)
{
	hist_record_n(h, value, 1);
}

int hist_add_at(struct hist *h, int32_t index, uint64_t n)
{
	if (index < 0 || index >= h->counts_len) {
		errno = EINVAL;
		return -1;
	}
	int64_t value = value_at_index(h, index);
	BUMP(&h->counts[index], n);
	BUMP(&h->total, n);
	note_extremes(h, value);
	return 0;
}

int hist_merge(struct hist *dst, const struct hist *src)
{
	if (dst->counts_len != src->counts_len ||
	    dst->unit_magnitude != src->unit_magnitude ||
	    dst->sub_bucket_count != src->sub_bucket_count) {
		errno = EINVAL;
		return -1;
	}
	/* Sum what we actually read, so dst stays self-consistent even while
	 * src's writer keeps going. */
	uint64_t added = 0;
	for (int32_t i = 0; i < src->counts_len; i++) {
		uint64_t c = LOAD(&src->counts[i]);
		if (c) {
			BUMP(&dst->counts[i], c);
			added += c;
		}
	}
	BUMP(&dst->total, added);
	BUMP(&dst->overflow, LOAD(&src->overflow));
	int64_t smin = LOAD(&src->min), smax = LOAD(&src->max);
	if (added && smin < LOAD(&dst->min))
		STORE(&dst->min, smin);
	if (added && smax > LOAD(&dst->max))
		STORE(&dst->max, smax);
	return 0;
}

uint64_t hist_count(const struct hist *h)
{
	return LOAD(&h->total);
}

uint64_t hist_count_le(const struct hist *h, int64_t value)
{
	if (value < 0)
		return 0;
	if (value > h->highest)
		value = h->highest;
	int32_t last = counts_index(h, value);
	uint64_t sum = 0;
	for (int32_t i = 0; i <= last; i++)
		sum += LOAD(&h->counts[i]);
	return sum;
}

int64_t hist_percentile(const struct hist *h, double p)
{
	uint64_t total = LOAD(&h->total);
	if (total == 0)
		return 0;
	if (p > 100.0)
		p = 100.0;
	if (p < 0.0)
		p = 0.0;
	uint64_t want = (uint64_t)(p / 100.0 * (double)total + 0.5);
	if (want < 1)
		want = 1;
	uint64_t seen = 0;
	for (int32_t i = 0; i < h->counts_len; i++) {
		seen += LOAD(&h->counts[i]);
		if (seen >= want)
			return highest_equivalent(h, value_at_index(h, i));
	}
	return hist_max(h);
}

int64_t hist_min(const struct hist *h)
{
	return LOAD(&h->total) ? lowest_equivalent(h, LOAD(&h->min)) : 0;
}

int64_t hist_max(const struct hist *h)
{
	return LOAD(&h->total) ? highest_equivalent(h, LOAD(&h->max)) : 0;
}

/* HdrHistogram's mean and deviation use each bucket's middle value. */
static double median_equivalent(const struct hist *h, int64_t value)
{
	return (double)lowest_equivalent(h, value) +
	       (double)(equivalent_range(h, value) >> 1);
}

double hist_mean(const struct hist *h)
{
	uint64_t total = LOAD(&h->total);
	if (!total)
		return 0.0;
	double sum = 0.0;
	for (int32_t i = 0; i < h->counts_len; i++) {
		uint64_t c = LOAD(&h->counts[i]);
		if (c)
			sum += median_equivalent(h, value_at_index(h, i)) *
			       (double)c;
	}
	return sum / (double)total;
}

double hist_stddev(const struct hist *h)
{
	uint64_t total = LOAD(&h->total);
	if (!total)
		return 0.0;
	double mean = hist_mean(h), sq = 0.0;
	for (int32_t i = 0; i < h->counts_len; i++) {
		uint64_t c = LOAD(&h->counts[i]);
		if (c) {
			double d = median_equivalent(h, value_at_index(h, i)) - mean;
			sq += d * d * (double)c;
		}
	}
	return sqrt(sq / (double)total);
}

int hist_foreach_percentile(const struct hist *h, int ticks,
			    int (*fn)(const struct hist_pct_row *row, void *arg),
			    void *arg)
{
	uint64_t total = LOAD(&h->total);
	if (!total || ticks < 1)
		return 0;
	double level = 0.0;
	uint64_t cum = 0;
	int64_t value = 0;
	int rc;
	for (int32_t i = 0; i < h->counts_len && cum < total; i++) {
		uint64_t c = LOAD(&h->counts[i]);
		if (!c)
			continue;
		cum += c;
		value = highest_equivalent(h, value_at_index(h, i));
		double reached = 100.0 * (double)cum / (double)total;
		/* Rows get denser as the level nears 100 %: ticks rows per
		 * halving of the remaining distance, as HdrHistogram prints.
		 * The bucket that completes the count gets one row, then the
		 * 100 % row below ends the table. */
		while (level <= reached) {
			struct hist_pct_row row = { value, level, cum };
			if ((rc = fn(&row, arg)))
				return rc;
			if (cum >= total)
				break;
			int halvings = (int)log2(100.0 / (100.0 - level)) + 1;
			level += 100.0 / (ticks * ldexp(1.0, halvings));
		}
	}
	struct hist_pct_row last = { value, 100.0, cum };
	return fn(&last, arg);
}

struct hgrm_out {
	FILE *out;
	double scale;
};

static int hgrm_row(const struct hist_pct_row *row, void *arg)
{
	const struct hgrm_out *o = arg;
	double q = row->percentile / 100.0;
	int n;
	if (row->percentile >= 100.0)
		n = fprintf(o->out, "%12.3f %2.12f %10llu\n",
			    (double)row->value / o->scale, q,
			    (unsigned long long)row->cumulative);
	else
		n = fprintf(o->out, "%12.3f %2.12f %10llu %14.2f\n",
			    (double)row->value / o->scale, q,
			    (unsigned long long)row->cumulative, 1.0 / (1.0 - q));
	return n < 0 ? -1 : 0;
}

int hist_write_hgrm(const struct hist *h, FILE *out, double scale, int ticks)
{
	struct hgrm_out o = { out, scale > 0 ? scale : 1.0 };
	if (fprintf(out, "%12s %14s %10s %14s\n\n", "Value", "Percentile",
		    "TotalCount", "1/(1-Percentile)") < 0)
		return -1;
	if (hist_foreach_percentile(h, ticks, hgrm_row, &o))
		return -1;
	if (fprintf(out,
		    "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
		    "#[Max     = %12.3f, Total count    = %12llu]\n"
		    "#[Buckets = %12d, SubBuckets     = %12d]\n",
		    hist_mean(h) / o.scale, hist_stddev(h) / o.scale,
		    (double)hist_max(h) / o.scale,
		    (unsigned long long)hist_count(h), h->bucket_count,
		    h->sub_bucket_count) < 0)
		return -1;
	return fflush(out) ? -1 : 0;
}
