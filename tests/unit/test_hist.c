/* Unit tests for lib/hist: bucket precision, percentiles, merge, the hgrm
 * output against a fixture, and the reference cases HdrHistogram's own
 * tests use (10,000 values at 1 ms plus one 100 s outlier). */
#include "check.h"
#include "hist.h"

#include <math.h>
#include <string.h>

static int within(double got, double want, double rel)
{
	return fabs(got - want) <= fabs(want) * rel;
}

static void test_shape(void)
{
	struct hist h;
	CHECK(hist_init_us(&h) == 0);
	CHECK_EQ_INT(h.sub_bucket_count, 2048);
	CHECK_EQ_INT(h.bucket_count, 14);	/* 2048 << 13 > 10,000,000 */
	CHECK_EQ_INT(h.counts_len, 15 * 1024);
	hist_free(&h);
	CHECK(hist_init(&h, 0, 100, 3) == -1);
	CHECK(hist_init(&h, 1, 100, 6) == -1);
	CHECK(hist_init(&h, 10, 15, 3) == -1);
	/* a decoded log's lowest near 2^63: refused, no shift overflows */
	CHECK(hist_init(&h, 1LL << 50, INT64_MAX, 5) == -1);
	CHECK(hist_init(&h, INT64_MAX / 2 + 1, INT64_MAX, 1) == -1);
}

/* Every value comes back within 1/1000 (three digits) of itself. */
static void test_precision(void)
{
	struct hist h;
	hist_init_us(&h);
	int bad = 0;
	for (int64_t v = 1; v <= 10 * 1000 * 1000; v = v * 3 / 2 + 1) {
		hist_reset(&h);
		hist_record(&h, v);
		int64_t got = hist_max(&h);
		if (got < v || got - v > v / 1000)
			bad++;
		if (hist_min(&h) > v)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	hist_free(&h);
}

static void test_reference(void)
{
	struct hist h;
	CHECK(hist_init(&h, 1, 3600LL * 1000 * 1000, 3) == 0);
	hist_record_n(&h, 1000, 10000);
	hist_record(&h, 100000000);
	CHECK_EQ_INT(hist_count(&h), 10001);
	CHECK_EQ_INT(hist_percentile(&h, 30.0), 1000);
	CHECK_EQ_INT(hist_percentile(&h, 99.0), 1000);
	CHECK_EQ_INT(hist_percentile(&h, 99.99), 1000);
	int64_t top = hist_percentile(&h, 99.999);
	CHECK(top >= 100000000 && top <= 100000000 + 100000000 / 1000);
	CHECK_EQ_INT(hist_percentile(&h, 100.0), top);
	CHECK_EQ_INT(hist_min(&h), 1000);
	CHECK(within(hist_mean(&h), (1000.0 * 10000 + 1e8) / 10001, 1e-3));
	CHECK(within(hist_stddev(&h), 999900.0, 1e-3));
	hist_free(&h);
}

static void test_uniform_and_merge(void)
{
	struct hist a, b, all;
	hist_init_us(&a);
	hist_init_us(&b);
	hist_init_us(&all);
	for (int64_t v = 1; v <= 10000; v++) {
		hist_record(v % 2 ? &a : &b, v);
		hist_record(&all, v);
	}
	CHECK(hist_merge(&a, &b) == 0);
	CHECK_EQ_INT(hist_count(&a), 10000);
	for (double p = 0.0; p <= 100.0; p += 0.5)
		CHECK_EQ_INT(hist_percentile(&a, p), hist_percentile(&all, p));
	CHECK(within((double)hist_percentile(&a, 50.0), 5000, 1e-3));
	CHECK(within((double)hist_percentile(&a, 99.0), 9900, 1e-3));
	CHECK(within(hist_mean(&a), 5000.5, 1e-3));
	CHECK_EQ_INT(hist_count_le(&a, 100), 100);
	CHECK_EQ_INT(hist_count_le(&a, 0), 0);
	CHECK_EQ_INT(hist_count_le(&a, 1 << 30), 10000);

	struct hist other;
	hist_init(&other, 1, 1000, 2);
	CHECK(hist_merge(&a, &other) == -1);
	hist_free(&other);
	hist_free(&a);
	hist_free(&b);
	hist_free(&all);
}

static void test_overflow(void)
{
	struct hist h;
	hist_init_us(&h);
	hist_record(&h, -5);
	hist_record(&h, 20 * 1000 * 1000);
	CHECK_EQ_INT(h.overflow, 1);
	CHECK_EQ_INT(hist_count(&h), 2);
	CHECK_EQ_INT(hist_min(&h), 0);
	CHECK(hist_max(&h) >= 10 * 1000 * 1000);
	hist_free(&h);
}

/* The percentile table must stay byte-for-byte what the HdrHistogram
 * plotter was shown to read (fixture: 1..10000 us, scaled to ms). */
static void test_hgrm_fixture(void)
{
	struct hist h;
	hist_init_us(&h);
	for (int64_t v = 1; v <= 10000; v++)
		hist_record(&h, v);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	CHECK(hist_write_hgrm(&h, mem, 1000.0, 5) == 0);
	fclose(mem);

	FILE *f = fopen(check_fixture("hist_1to10000.hgrm"), "r");
	CHECK(f != NULL);
	if (f) {
		static char want[1 << 16];
		size_t n = fread(want, 1, sizeof(want) - 1, f);
		want[n] = 0;
		fclose(f);
		CHECK_EQ_INT(len, n);
		CHECK(strcmp(buf, want) == 0);
	}
	if (getenv("HIST_WRITE_FIXTURE"))
		fputs(buf, stdout);
	free(buf);
	hist_free(&h);
}

static int all_zero(const struct hist *h)
{
	for (int32_t i = 0; i < h->counts_len; i++)
		if (h->counts[i])
			return 0;
	return 1;
}

/* A reset leaves no count anywhere, whatever was recorded (the lowest
 * slot, the clamped top, a merge, a fresh histogram), and the histogram
 * records as new after it. */
static void test_reset(void)
{
	struct hist h, other;
	CHECK(hist_init_us(&h) == 0 && hist_init_us(&other) == 0);
	hist_reset(&h);
	CHECK(all_zero(&h));
	const int64_t sets[][3] = { { 0, 1, 2 }, { 17, 250, 4000 }, { 9000000, 20000000, 5 },
				    { 1, 10000000, 123456 } };
	for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		for (int i = 0; i < 3; i++)
			hist_record(&h, sets[k][i]);
		hist_reset(&h);
		CHECK(all_zero(&h));
		CHECK_EQ_INT(hist_count(&h), 0);
		CHECK_EQ_INT(hist_percentile(&h, 50.0), 0);
		CHECK_EQ_INT(hist_max(&h), 0);
	}
	hist_record(&other, 3);
	hist_record(&other, 7000000);
	CHECK(hist_merge(&h, &other) == 0);
	hist_reset(&h);
	CHECK(all_zero(&h));
	hist_record(&h, 42);
	CHECK_EQ_INT(hist_count(&h), 1);
	CHECK(within((double)hist_percentile(&h, 100.0), 42, 0.001));
	CHECK_EQ_INT(hist_min(&h), 42);
	hist_free(&h);
	hist_free(&other);
}

int main(void)
{
	test_shape();
	test_precision();
	test_reference();
	test_uniform_and_merge();
	test_overflow();
	test_reset();
	test_hgrm_fixture();
	return check_done();
}
