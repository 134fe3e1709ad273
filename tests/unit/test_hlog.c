/* Unit tests for lib/hlog: encode and decode give back every count in its
 * slot, counts too big for 8 LEB128 bytes survive, logs written by
 * hdr-histogram-js read with exact counts, and every kind of damage is
 * refused with a reason instead of a wrong histogram. */
#include "check.h"
#include "hlog.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <zlib.h>

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
		*(iv.line.tag[0] ? tagged : untagged) += hist_count(&iv.h);
		if (!iv.line.tag[0] && hist_max(&iv.h) > *max)
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

/* An encoding written by hand: the V2 header of the given settings, the
 * counts array as the given words (ZigZag LEB128, runs of zeros negative),
 * compressed, then junk bytes the compressed length counts too, in
 * base64, as a hostile log would carry it. payload < 0: the words' true
 * length in the header. free() it. */
static char *craft_junk(int64_t lowest, int64_t highest, int sigfigs,
			const int64_t *words, int n, int64_t payload,
			size_t junk)
{
	uint8_t plain[40 + 16 * 9], *p = plain + 40;
	for (int i = 0; i < n; i++) {
		uint64_t v = ((uint64_t)words[i] << 1) ^
			     (uint64_t)(words[i] >> 63);
		for (int b = 0; b < 8 && v >= 0x80; b++, v >>= 7)
			*p++ = (uint8_t)(v | 0x80);
		*p++ = (uint8_t)v;
	}
	uint64_t head[] = { 0x1c849313, payload < 0 ? (uint64_t)(p - plain - 40)
			    : (uint64_t)payload, 0, (uint64_t)sigfigs,
			    (uint64_t)lowest, (uint64_t)highest,
			    0x3ff0000000000000ULL /* 1.0 */ };
	static const int width[] = { 4, 4, 4, 4, 8, 8, 8 };
	uint8_t *q = plain;
	for (int f = 0; f < 7; f++)
		for (int b = width[f] - 1; b >= 0; b--)
			*q++ = (uint8_t)(head[f] >> (8 * b));
	uint8_t packed[8 + 512 + 2048];
	uLongf zlen = 512;
	CHECK(compress(packed + 8, &zlen, plain, (uLong)(p - plain)) == Z_OK);
	CHECK(junk <= 2048);
	memset(packed + 8 + zlen, 0x55, junk);
	zlen += junk;
	const uint8_t cookie[8] = { 0x1c, 0x84, 0x93, 0x14, (uint8_t)(zlen >> 24),
				    (uint8_t)(zlen >> 16), (uint8_t)(zlen >> 8),
				    (uint8_t)zlen };
	memcpy(packed, cookie, 8);
	char *text = malloc(4 * ((8 + zlen + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)text, packed, (int)(8 + zlen));
	return text;
}

static char *craft(int64_t lowest, int64_t highest, int sigfigs,
		   const int64_t *words, int n, int64_t payload)
{
	return craft_junk(lowest, highest, sigfigs, words, n, payload, 0);
}

/* The words into a 1 us .. 10 s, 3 digits histogram with hlog_decode_add. */
static int add_words(struct hist *h, const int64_t *words, int n, char *why,
		     size_t whylen)
{
	char *text = craft(1, 10000000, 3, words, n, -1);
	int rc = hlog_decode_add(text, strlen(text), h, why, whylen);
	free(text);
	return rc;
}

static void crafted_refused(const int64_t *words, int n, const char *reason)
{
	char *text = craft(1, 10000000, 3, words, n, -1);
	refused(text, reason);
	free(text);
}

static void test_overflow(void)
{
	/* a run of INT64_MAX zeros after one count: index - v overflows
	 * into a negative index the next count lands at */
	const int64_t run[] = { 1, -INT64_MAX, 5 };
	crafted_refused(run, 3, "a run of 9223372036854775807 zero counts "
			"goes past the histogram's");
	const int64_t run_end[] = { 3, -(INT64_MAX - 1), 1 };
	crafted_refused(run_end, 3, "goes past the histogram's");
	/* the longest run a word can say: INT64_MIN has no negation */
	const int64_t run_min[] = { 1, INT64_MIN };
	crafted_refused(run_min, 2, "a run of 9223372036854775808 zero counts "
			"goes past the histogram's 15360 slots");
	/* counts no reader can hold: their sum past 2^63-1 */
	const int64_t big[] = { INT64_MAX, 0, 1 };
	crafted_refused(big, 3, "takes the histogram's total of "
			"9223372036854775807 past 2^63-1");
	const int64_t fine[] = { 1, -10, INT64_MAX - 1 };
	char *text = craft(1, 10000000, 3, fine, 3, -1);
	struct hist h;
	char why[256] = "";
	CHECK_EQ_INT(hlog_decode(text, strlen(text), &h, why, sizeof(why)), 0);
	CHECK_EQ_INT(hist_count(&h), INT64_MAX);
	CHECK_EQ_INT(h.counts[11], INT64_MAX - 1);
	/* the same limit across lines added into one histogram */
	const int64_t one[] = { 1 };
	CHECK_EQ_INT(add_words(&h, one, 1, why, sizeof(why)), -1);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK(strstr(why, "past 2^63-1") != NULL);
	hist_free(&h);
	free(text);
}

/* What a line may make the reader do is bounded by the line. */
static void test_bounds(void)
{
	const int64_t one[] = { 1 };
	/* the slots are known before any is allocated */
	struct hist h;
	CHECK(hist_init(&h, 1, (INT64_C(1) << 24) - 1, 5) == 0);
	CHECK_EQ_INT(h.counts_len, HLOG_MAX_SLOTS);
	CHECK_EQ_INT(hist_slots(1, (INT64_C(1) << 24) - 1, 5), HLOG_MAX_SLOTS);
	hist_free(&h);
	CHECK_EQ_INT(hist_slots(1, INT64_C(1) << 24, 5), HLOG_MAX_SLOTS + 131072);
	CHECK_EQ_INT(hist_slots(0, 100, 3), -1);
	/* 2^62 at 5 digits: 6 million slots, 48 MB, from 60 bytes */
	char *text = craft(1, INT64_C(1) << 62, 5, one, 1, -1);
	refused(text, "a histogram of 6160384 slots (lowest 1, highest "
		"4611686018427387904, 5 significant digits) is larger than "
		"the 1048576 read here");
	free(text);
	text = craft(1, INT64_C(1) << 62, 3, one, 1, -1);
	char why[256] = "";
	CHECK_EQ_INT(hlog_decode(text, strlen(text), &h, why, sizeof(why)), 0);
	hist_free(&h);
	free(text);
	/* a payload no DEFLATE stream of this size can hold */
	text = craft(1, 10000000, 3, one, 1, 1000000);
	refused(text, "a payload of 1000000 bytes cannot come out of");
	free(text);
	/* one that 1000 compressed bytes could hold, but 15360 slots'
	 * counts cannot (9 bytes each): refused before a byte of it is
	 * allocated or inflated, not once it has been (a payload of 10^9
	 * took 985 MB so); into a histogram being added up, too */
	text = craft_junk(1, 10000000, 3, one, 1, 1000000, 1000);
	refused(text, "a payload of 1000000 bytes cannot fit 15360 slots");
	CHECK(hist_init_us(&h) == 0);
	CHECK_EQ_INT(hlog_decode_add(text, strlen(text), &h, why, sizeof(why)),
		     -1);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK(strstr(why, "a payload of 1000000 bytes cannot fit 15360 slots"));
	hist_free(&h);
	free(text);
	/* the most they can take is read */
	text = craft_junk(1, 10000000, 3, one, 1, 15360 * 9, 200);
	refused(text, "the compressed histogram is corrupt or cut short "
		"(138240 payload bytes promised)");
	free(text);
}

static void test_decode_add(void)
{
	struct hist h, other;
	char why[256] = "";
	CHECK(hist_init_us(&h) == 0);
	const int64_t a[] = { 0, 2, -3, 4 }, b[] = { 5, 1 };
	CHECK_EQ_INT(add_words(&h, a, 4, why, sizeof(why)), 0);
	CHECK_EQ_INT(add_words(&h, b, 2, why, sizeof(why)), 0);
	CHECK_EQ_INT(hist_count(&h), 12);
	CHECK_EQ_INT(h.counts[0], 5);
	CHECK_EQ_INT(h.counts[1], 3);
	CHECK_EQ_INT(h.counts[5], 4);
	/* other settings: refused as such, nothing added */
	CHECK(hist_init(&other, 1, 10000000, 2) == 0);
	hist_record(&other, 7);
	char *text = hlog_encode(&other);
	errno = 0;
	CHECK_EQ_INT(hlog_decode_add(text, strlen(text), &h, why, sizeof(why)),
		     -1);
	CHECK_EQ_INT(errno, EDOM);
	CHECK(strstr(why, "histogram settings (lowest 1, highest 10000000, 2 "
		     "digits) differ") != NULL);
	CHECK_EQ_INT(hist_count(&h), 12);
	free(text);
	hist_free(&other);
	hist_free(&h);
}

/* A log whose run was stopped says so in a comment the reader notes; a
 * whole one has none. */
static void test_interrupted(void)
{
	for (int stopped = 0; stopped < 2; stopped++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct hist h;
		CHECK(hist_init_us(&h) == 0);
		hist_record(&h, 100);
		CHECK_EQ_INT(hlog_write_header(f, "a run", 1700000000.0), 0);
		if (stopped)
			CHECK_EQ_INT(hlog_write_interrupted(f, "stopped after "
					"1.500 of 10.000 s"), 0);
		CHECK_EQ_INT(hlog_write_interval(f, NULL, 0, 1.5, &h, 1000.0), 0);
		fclose(f);
		f = fmemopen(buf, len, "r");
		struct hlog_reader r;
		struct hlog_line l;
		char why[256] = "";
		hlog_reader_init(&r, f);
		CHECK_EQ_INT(hlog_read_line(&r, &l, why, sizeof(why)), 1);
		CHECK_EQ_INT(hlog_read_line(&r, &l, why, sizeof(why)), 0);
		CHECK_EQ_INT(r.interrupted_line, stopped ? 6 : 0);
		CHECK(strcmp(r.interrupted, stopped ? "stopped after 1.500 of "
			     "10.000 s" : "") == 0);
		hlog_reader_free(&r);
		fclose(f);
		free(buf);
		hist_free(&h);
	}
}

int main(void)
{
	test_roundtrip();
	test_fixtures();
	test_damage();
	test_overflow();
	test_bounds();
	test_decode_add();
	test_interrupted();
	return check_done();
}
