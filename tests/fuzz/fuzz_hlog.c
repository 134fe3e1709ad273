/*
 * libFuzzer target for the HdrHistogram interval-log reader (lib/hlog.c)
 * behind loadgen merge: logs come from other machines and other tools.
 * Every input must read as intervals or stop with "line N: why"; every
 * histogram read must survive what merge does with it (percentiles, adding
 * up) and encode back to the same counts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Encode h and read it back: the counts must come out the same. */
static void round_trip(const struct hist *h)
{
	char *text = hlog_encode(h);
	if (!text)
		abort();
	struct hist back;
	char why[256];
	if (hlog_decode(text, strlen(text), &back, why, sizeof(why)) < 0 ||
	    back.counts_len != h->counts_len || back.total != h->total ||
	    memcmp(back.counts, h->counts,
		   (size_t)h->counts_len * sizeof(*h->counts)) != 0)
		abort();
	hist_free(&back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;	/* fmemopen refuses an empty buffer */
	FILE *in = fmemopen((void *)data, size, "r");
	if (!in)
		abort();
	struct hlog_reader r;
	struct hlog_interval iv;
	struct hist sum = { 0 };
	char why[512];
	int got;
	hlog_reader_init(&r, in);
	while ((got = hlog_read(&r, &iv, why, sizeof(why))) == 1) {
		struct hist *h = &iv.h;
		if (hist_count(h) != h->total || hist_min(h) > hist_max(h) ||
		    hist_percentile(h, 50) > hist_percentile(h, 100))
			abort();
		hist_count_le(h, hist_percentile(h, 99.9));
		round_trip(h);
		/* merge adds intervals of the first one's settings */
		if (!sum.counts)
			hist_init(&sum, h->lowest, h->highest, h->sigfigs);
		if (hist_merge(&sum, h) == 0 && hist_count(&sum) < hist_count(h))
			abort();
		hist_free(h);
	}
	if (got < 0 && strncmp(why, "line ", 5) != 0)
		abort();
	hist_free(&sum);
	hlog_reader_free(&r);
	fclose(in);
	return 0;
}
