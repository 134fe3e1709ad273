/* Unit tests for lib/hlog: encode and decode give back every count in its
 * slot, counts too big for 8 LEB128 bytes survive, logs written by
 * hdr-histogram-js read with exact counts, and every kind of damage is
 * refused with a reason instead of a wrong histogram. */
#include "check.h"
#include "hlog.h"

#include <stdlib.h>
#include <string.h>

static int same_counts(const struct hist *a, const struct hist *b)
{
	if (a->counts_len != b->counts_len || hist_count(a) != hist_count(b))
		return 0;
	for (int32_t i = 0; i < a->counts_len; i++)
		if (a->counts[i] != b->counts[i])
			return 0;
	return hist_min(a) == hist_min(b) && hist_max(a) == hist_max(b);
}

static void roundtrip(struct hist *h)
{
	char *text = hlog_encode(h);
	CHECK(text != NULL);
	struct hist back;
	char why[256] = "";
	int rc = hlog_decode(text, strlen(text), &back, why, sizeof(why));
	CHECK_EQ_INT(rc, 0);
	if (rc == 0) {
		CHECK(same_counts(h, &back));
		CHECK_EQ_INT(back.sigfigs, h->sigfigs);
		CHECK_EQ_INT(back.lowest, h->lowest);
		CHECK_EQ_INT(back.highest, h->highest);
		hist_free(&back);
	} else {
		fprintf(stderr, "decode: %s\n", why);
	}
	free(text);
}

static void test_roundtrip(void)
{
	struct hist h;
	CHECK(hist_init_us(&h) == 0);
	roundtrip(&h);				/* empty */
	hist_record(&h, 0);
	roundtrip(&h);				/* slot 0 only */
	unsigned seed = 1;
	for (int i = 0; i < 100000; i++) {
		seed = seed * 1103515245 + 12345;
		hist_record(&h, (int64_t)(seed >> 8) % 10000000);
	}
	hist_record(&h, 10000000);		/* the top slot */
	roundtrip(&h);
	/* ZigZag doubles a count: one of 2^62 needs the ninth byte. */
	hist_record_n(&h, 1234, (uint64_t)1 << 62);
	roundtrip(&h);
	hist_free(&h);

	CHECK(hist_init(&h, 1000, 3600LL * 1000 * 1000 * 1000, 2) == 0);
	hist_record_n(&h, 5000000, 7);
	hist_record(&h, 1000);
	roundtrip(&h);
	hist_free(&h);
}

/* Read a fixture log; the number of intervals with each tag and their
 * summed counts. */
static int read_log(const char *name, uint64_t *untagged, uint64_t *tagged,
		    int64_t *max, char *why, size_t whylen)
{
	FILE *f = fopen(check_fixture(name), "r");
	if (!f) {
		snprintf(why, whylen, "cannot open %s", check_fixture(name));
		return -1;
	}
	struct hlog_reader r;
	struct hlog_interval iv;
	int got, n = 0;
	*untagged = *tagged = 0;
	*max = 0;
	hlog_reader_init(&r, f);
	while ((got = hlog_read(&r, &iv, why, whylen)) == 1) {
		*(iv.tag[0] ? tagged : untagged) += hist_count(&iv.h);
		if (!iv.tag[0] && hist_max(&iv.h) > *max)
			*max = hist_max(&iv.h);
		hist_free(&iv.h);
		n++;
	}
	hlog_reader_free(&r);
	fclose(f);
	return got < 0 ? -1 : n;
}

static void test_fixtures(void)
{
	uint64_t untagged, tagged;
	int64_t max;
	char why[256] = "";
	CHECK_EQ_INT(read_log("hlog/host-a.hlog", &untagged, &tagged, &max, why,
			      sizeof(why)), 3);
	CHECK_EQ_INT(untagged, 1010);
	CHECK_EQ_INT(tagged, 1000);
	CHECK_EQ_INT(max, 5003);	/* 5000's bucket ends at 5003 */
	CHECK_EQ_INT(read_log("hlog/host-b.hlog", &untagged, &tagged, &max, why,
			      sizeof(why)), 2);
	CHECK_EQ_INT(untagged, 501);
	CHECK_EQ_INT(max, 90047);

	CHECK_EQ_INT(read_log("hlog/truncated.hlog", &untagged, &tagged, &max,
			      why, sizeof(why)), -1);
	CHECK(strstr(why, "line 6: cut short") != NULL);
	CHECK_EQ_INT(read_log("hlog/corrupt.hlog", &untagged, &tagged, &max,
			      why, sizeof(why)), -1);
	CHECK(strstr(why, "line 5: the compressed histogram is corrupt") != NULL);
}

static void refused(const char *text, const char *reason)
{
	struct hist h;
	char why[256] = "";
	CHECK_EQ_INT(hlog_decode(text, strlen(text), &h, why, sizeof(why)), -1);
	CHECK(h.counts == NULL);
	if (!strstr(why, reason)) {
		fprintf(stderr, "'%s': said '%s', not '%s'\n", text, why, reason);
		CHECK(!"the reason");
	}
}

static void test_damage(void)
{
	refused("", "not base64");
	refused("HISTFAA", "not base64");
	refused("HIST!AAAAKnicE2mZLMzAwMDBwMDAyMDAzAABjGByxrQGGP844wbOlUwL", "not base64");
	/* an uncompressed V2 cookie where the compressed one belongs */
	refused("HISTEwAAAAA=", "not a compressed V2 histogram");
	/* the compressed cookie promising 255 bytes and giving 1 */
	refused("HISTFAAAAP8A", "cut short: 1 of 255");

	struct hist h;
	hist_init_us(&h);
	hist_record(&h, 42);
	char *text = hlog_encode(&h);
	/* 8 base64 characters less: the zlib stream ends early */
	size_t n = strlen(text);
	char *cut = strndup(text, n - 8);
	refused(cut, "cut short");
	free(cut);
	free(text);
	hist_free(&h);
}

int main(void)
{
	test_roundtrip();
	test_fixtures();
	test_damage();
	return check_done();
}
