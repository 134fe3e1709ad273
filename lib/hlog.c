/*
 * hlog: the V2 histogram encoding and the interval log around it.
 *
 * Interop is the whole point, so the bytes follow HdrHistogram's Java
 * encoder exactly: cookies with the word-size nibble set (0x10, "ZigZag
 * LEB128, up to 9 bytes a word"), a normalizing index offset of 0, an
 * integer-to-double ratio of 1.0, counts up to the last non-zero one. The
 * decoder takes what any V2 encoder writes, and checks every length it is
 * given before trusting it: a log comes from another machine.
 */
#include "hlog.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <zlib.h>

#include "why.h"

#define COOKIE_V2		0x1c849303
#define COOKIE_V2_COMPRESSED	0x1c849304
#define COOKIE_WORD_SIZE	0x10	/* Java sets it; decoders mask 0xf0 */
#define HEADER_LEN		40	/* cookie .. conversion ratio */
#define WORD_MAX		9	/* LEB128-64b9B */

static uint8_t *put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

/* ZigZag, then LEB128 whose ninth byte carries a full 8 bits. */
static uint8_t *put_word(uint8_t *p, int64_t value)
{
	uint64_t v = ((uint64_t)value << 1) ^ (uint64_t)(value >> 63);
	for (int i = 0; i < 8; i++) {
		if (v < 0x80) {
			*p++ = (uint8_t)v;
			return p;
		}
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Returns the bytes used, or 0 when the word runs past end. */
static size_t get_word(const uint8_t *p, const uint8_t *end, int64_t *value)
{
	uint64_t v = 0;
	size_t n = 0;
	for (; n < 8; n++) {
		if (p + n >= end)
			return 0;
		v |= (uint64_t)(p[n] & 0x7f) << (7 * n);
		if (!(p[n] & 0x80))
			break;
	}
	if (n == 8) {
		if (p + n >= end)
			return 0;
		v |= (uint64_t)p[n] << 56;
	}
	*value = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return n + 1;
}

/* The uncompressed encoding of h into buf (HEADER_LEN + WORD_MAX per slot
 * is enough); returns its length. */
static size_t encode_plain(const struct hist *h, uint8_t *buf)
{
	/* The caller's histogram is at rest: nobody records into it now. */
	int32_t used = h->counts_len;
	while (used > 0 && !h->counts[used - 1])
		used--;
	uint8_t *p = buf + HEADER_LEN;
	for (int32_t i = 0; i < used;) {
		int64_t zeros = 0;
		while (i < used && !h->counts[i]) {
			zeros++;
			i++;
		}
		if (zeros > 1)
			p = put_word(p, -zeros);
		else if (zeros == 1)
			p = put_word(p, 0);
		else
			p = put_word(p, (int64_t)h->counts[i++]);
	}
	size_t payload = (size_t)(p - buf - HEADER_LEN);
	double ratio = 1.0;
	uint64_t ratio_bits;
	memcpy(&ratio_bits, &ratio, sizeof(ratio_bits));
	uint8_t *q = put_be(buf, COOKIE_V2 | COOKIE_WORD_SIZE, 4);
	q = put_be(q, payload, 4);
	q = put_be(q, 0, 4);		/* normalizing index offset */
	q = put_be(q, (uint64_t)h->sigfigs, 4);
	q = put_be(q, (uint64_t)h->lowest, 8);
	q = put_be(q, (uint64_t)h->highest, 8);
	put_be(q, ratio_bits, 8);
	return HEADER_LEN + payload;
}

char *hlog_encode(const struct hist *h)
{
	size_t cap = HEADER_LEN + (size_t)h->counts_len * WORD_MAX;
	uint8_t *plain = malloc(cap);
	uLongf zlen = compressBound(cap);
	uint8_t *packed = malloc(8 + zlen);
	char *text = NULL;
	if (!plain || !packed)
		goto out;
	size_t n = encode_plain(h, plain);
	zlen = compressBound(n);
	if (compress(packed + 8, &zlen, plain, n) != Z_OK)
		goto out;
	put_be(put_be(packed, COOKIE_V2_COMPRESSED | COOKIE_WORD_SIZE, 4),
	       zlen, 4);
	size_t total = 8 + zlen;
	text = malloc(4 * ((total + 2) / 3) + 1);
	if (text)
		EVP_EncodeBlock((unsigned char *)text, packed, (int)total);
out:
	free(plain);
	free(packed);
	if (!text)
		errno = ENOMEM;
	return text;
}

/* Base64 into a new buffer; *n is its length. NULL when not base64. */
static uint8_t *from_base64(const char *text, size_t *n)
{
	if (*n == 0 || *n % 4 || *n > INT32_MAX)
		return NULL;
	uint8_t *bin = malloc(*n / 4 * 3 + 1);
	if (!bin)
		return NULL;
	int got = EVP_DecodeBlock(bin, (const unsigned char *)text, (int)*n);
	if (got < 0) {
		free(bin);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes. */
	size_t pad = (text[*n - 1] == '=') + (text[*n - 2] == '=');
	*n = (size_t)got - pad;
	return bin;
}

/* Inflate exactly want bytes into out from the stream's input. */
static int inflate_exactly(z_stream *z, uint8_t *out, size_t want, bool last)
{
	z->next_out = out;
	z->avail_out = (uInt)want;
	int rc = inflate(z, last ? Z_FINISH : Z_SYNC_FLUSH);
	if (z->avail_out)
		return -1;
	return last ? (rc == Z_STREAM_END ? 0 : -1)
		    : (rc == Z_OK || rc == Z_STREAM_END ? 0 : -1);
}

/* The counts words of the payload into h. Every count lands in h's slots
 * and h's total stays within what the format can carry (an int64 per
 * count): a count past it would come out negative in any reader. */
static int decode_counts(struct hist *h, const uint8_t *p, const uint8_t *end,
			 char *why, size_t whylen)
{
	int64_t index = 0;
	while (p < end) {
		int64_t v;
		size_t used = get_word(p, end, &v);
		if (!used)
			return why_set(why, whylen, "a count is cut short");
		p += used;
		if (v < 0) {
			/* -v, not index - v: a run near INT64_MIN would
			 * overflow the sum and land the index anywhere;
			 * and its length is told unsigned, as INT64_MIN
			 * has no negation */
			if (v == INT64_MIN || -v > h->counts_len - index)
				return why_set(why, whylen, "a run of %llu zero "
					       "counts goes past the histogram's "
					       "%d slots",
					       0ULL - (unsigned long long)v,
					       h->counts_len);
			index -= v;
			continue;
		}
		if (index >= h->counts_len)
			return why_set(why, whylen, "more counts than the "
				       "histogram's %d slots", h->counts_len);
		if ((uint64_t)v > INT64_MAX - h->total)
			return why_set(why, whylen, "a count of %lld takes the "
				       "histogram's total of %llu past 2^63-1",
				       (long long)v,
				       (unsigned long long)h->total);
		if (v)
			hist_add_at(h, (int32_t)index, (uint64_t)v);
		index++;
	}
	return 0;
}

/* A histogram's encoding taken apart: its settings and the counts words. */
struct packed {
	int64_t lowest, highest, sigfigs;
	int32_t slots;		/* of the histogram the counts go into */
	bool other;		/* refused: settings other than into's */
	uint8_t *plain;		/* the payload, payload bytes */
	uint64_t payload;
};

/* The slots p's counts go into: into's, when p has its settings, else
 * (into NULL) those p's settings make, up to HLOG_MAX_SLOTS. What a
 * reader does with a histogram passes over every slot, so the slots a
 * line may ask for are the work it may cause. -1 with why when refused. */
static int32_t settle(struct packed *p, const struct hist *into, char *why,
		      size_t whylen)
{
	if (into) {
		if (p->lowest == into->lowest && p->highest == into->highest &&
		    p->sigfigs == into->sigfigs)
			return into->counts_len;
		p->other = true;
		return why_set(why, whylen, "histogram settings (lowest %lld, "
			       "highest %lld, %lld digits) differ",
			       (long long)p->lowest, (long long)p->highest,
			       (long long)p->sigfigs);
	}
	int32_t slots = p->sigfigs < 1 || p->sigfigs > 5 ? -1
			: hist_slots(p->lowest, p->highest, (int)p->sigfigs);
	if (slots < 0)
		return why_set(why, whylen, "unsupported histogram settings: "
			       "lowest %lld, highest %lld, %lld significant "
			       "digits", (long long)p->lowest,
			       (long long)p->highest, (long long)p->sigfigs);
	if (slots > HLOG_MAX_SLOTS)
		return why_set(why, whylen, "a histogram of %d slots (lowest "
			       "%lld, highest %lld, %lld significant digits) is "
			       "larger than the %d read here", slots,
			       (long long)p->lowest, (long long)p->highest,
			       (long long)p->sigfigs, HLOG_MAX_SLOTS);
	return slots;
}

/* Undo base64 and zlib and read the V2 header, then the payload into
 * the histogram into (NULL: one of the header's settings; settle()).
 * Every size is checked before it is allocated: the payload's against
 * DEFLATE's own limit (zlib: at most 1032 bytes out per byte in, 258 at
 * a time), so a short line cannot make a large allocation, and against
 * what the slots' counts can take (WORD_MAX bytes a slot), so a long one
 * cannot either: 4 GB may come out of a 5 MB line. Returns 0, or -1 with
 * why filled; p->plain is to be freed either way. */
static int unpack(const char *text, size_t n, const struct hist *into,
		  struct packed *p, char *why, size_t whylen)
{
	memset(p, 0, sizeof(*p));
	uint8_t *bin = from_base64(text, &n);
	if (!bin)
		return why_set(why, whylen, "the histogram is not base64 text");
	int rc = -1;
	z_stream z;
	memset(&z, 0, sizeof(z));
	bool zinit = false;
	uint8_t head[HEADER_LEN];
	if (n < 8 || (get_be(bin, 4) & ~0xf0u) != COOKIE_V2_COMPRESSED) {
		why_set(why, whylen, "not a compressed V2 histogram (cookie "
			"0x%08llx)", n < 4 ? 0ULL
			: (unsigned long long)get_be(bin, 4));
		goto out;
	}
	uint64_t zlen = get_be(bin + 4, 4);
	if (zlen > n - 8) {
		why_set(why, whylen, "the histogram is cut short: %zu of %llu "
			"compressed bytes", n - 8, (unsigned long long)zlen);
		goto out;
	}
	if (inflateInit(&z) != Z_OK) {
		why_set(why, whylen, "zlib: out of memory");
		goto out;
	}
	zinit = true;
	z.next_in = bin + 8;
	z.avail_in = (uInt)zlen;
	if (inflate_exactly(&z, head, HEADER_LEN, false) < 0 ||
	    (get_be(head, 4) & ~0xf0u) != COOKIE_V2) {
		why_set(why, whylen, "the compressed histogram is corrupt "
			"(no V2 header inside)");
		goto out;
	}
	/* head + 8, the normalizing index offset, needs no undoing: encoders
	 * write the counts in value order whatever it is (and
	 * hdr-histogram-js writes 1 there for every histogram). The ratio at
	 * head + 32 only scales a DoubleHistogram's values. */
	p->payload = get_be(head + 4, 4);
	p->sigfigs = (int32_t)get_be(head + 12, 4);
	p->lowest = (int64_t)get_be(head + 16, 8);
	p->highest = (int64_t)get_be(head + 24, 8);
	if (p->payload + HEADER_LEN > zlen * 1032 + 258) {
		why_set(why, whylen, "a payload of %llu bytes cannot come out "
			"of %llu compressed bytes",
			(unsigned long long)p->payload,
			(unsigned long long)zlen);
		goto out;
	}
	if ((p->slots = settle(p, into, why, whylen)) < 0)
		goto out;
	if (p->payload > (uint64_t)p->slots * WORD_MAX) {
		why_set(why, whylen, "a payload of %llu bytes cannot fit %d "
			"slots", (unsigned long long)p->payload, p->slots);
		goto out;
	}
	p->plain = malloc(p->payload + 1);
	if (!p->plain) {
		why_set(why, whylen, "out of memory");
		goto out;
	}
	if (inflate_exactly(&z, p->plain, p->payload, true) < 0) {
		why_set(why, whylen, "the compressed histogram is corrupt or "
			"cut short (%llu payload bytes promised)",
			(unsigned long long)p->payload);
		goto out;
	}
	rc = 0;
out:
	if (zinit)
		inflateEnd(&z);
	free(bin);
	return rc;
}

int hlog_decode(const char *text, size_t n, struct hist *h, char *why,
		size_t whylen)
{
	memset(h, 0, sizeof(*h));
	struct packed p;
	int rc = unpack(text, n, NULL, &p, why, whylen);
	if (!rc && hist_init(h, p.lowest, p.highest, (int)p.sigfigs) < 0)
		rc = why_set(why, whylen, "out of memory");
	if (!rc)
		rc = decode_counts(h, p.plain, p.plain + p.payload, why, whylen);
	if (rc < 0)
		hist_free(h);
	free(p.plain);
	return rc;
}

int hlog_decode_add(const char *text, size_t n, struct hist *h, char *why,
		    size_t whylen)
{
	struct packed p;
	int rc = unpack(text, n, h, &p, why, whylen);
	if (!rc)
		rc = decode_counts(h, p.plain, p.plain + p.payload, why, whylen);
	free(p.plain);
	if (rc < 0)
		errno = p.other ? EDOM : EINVAL;
	return rc;
}

int hlog_write_header(FILE *out, const char *comment, double start_unix_s)
{
	char when[64] = "";
	time_t t = (time_t)start_unix_s;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), "%a %b %d %H:%M:%S UTC %Y", &tm);
	if (comment && fprintf(out, "#[%s]\n", comment) < 0)
		return -1;
	return fprintf(out,
		       "#[Histogram log format version 1.3]\n"
		       "#[StartTime: %.3f (seconds since epoch), %s]\n"
		       "#[BaseTime: %.3f (seconds since epoch)]\n"
		       "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
		       "\"Interval_Compressed_Histogram\"\n",
		       start_unix_s, when, start_unix_s) < 0 ? -1 : 0;
}

int hlog_write_interval(FILE *out, const char *tag, double start_s,
			double length_s, const struct hist *h, double max_scale)
{
	char *text = hlog_encode(h);
	if (!text)
		return -1;
	int n = fprintf(out, "%s%s%s%.3f,%.3f,%.3f,%s\n", tag ? "Tag=" : "",
			tag ? tag : "", tag ? "," : "", start_s, length_s,
			(double)hist_max(h) / max_scale, text);
	free(text);
	return n < 0 ? -1 : 0;
}

int hlog_write_interrupted(FILE *out, const char *why)
{
	return fprintf(out, "%s%s]\n", HLOG_INTERRUPTED, why) < 0 ? -1 : 0;
}

void hlog_reader_init(struct hlog_reader *r, FILE *in)
{
	memset(r, 0, sizeof(*r));
	r->in = in;
}

void hlog_reader_free(struct hlog_reader *r)
{
	free(r->buf);
	r->buf = NULL;
}

/* "START,LENGTH,MAX," then the histogram; returns where it starts. */
static char *interval_fields(char *s, struct hlog_line *l)
{
	double v[3];
	for (int i = 0; i < 3; i++) {
		char *end;
		errno = 0;
		v[i] = strtod(s, &end);
		if (end == s || errno || *end != ',')
			return NULL;
		s = end + 1;
	}
	l->start_s = v[0];
	l->length_s = v[1];
	return s;
}

/* A comment line: the run's note that it was cut short is kept. */
static void comment(struct hlog_reader *r, const char *s)
{
	size_t k = strlen(HLOG_INTERRUPTED), n = strlen(s);
	if (r->interrupted_line || strncmp(s, HLOG_INTERRUPTED, k) != 0)
		return;
	r->interrupted_line = r->line;
	n -= k + (s[n - 1] == ']');
	snprintf(r->interrupted, sizeof(r->interrupted), "%.*s", (int)n,
		 s + k);
}

int hlog_read_line(struct hlog_reader *r, struct hlog_line *l, char *why,
		   size_t whylen)
{
	memset(l, 0, sizeof(*l));
	ssize_t n;
	while ((n = getline(&r->buf, &r->cap, r->in)) >= 0) {
		r->line++;
		char *s = r->buf;
		if (n == 0 || s[n - 1] != '\n')
			return why_set(why, whylen, "line %d: cut short (no "
				       "newline at the end of the file)",
				       r->line);
		while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r'))
			s[--n] = 0;
		if (n && s[0] == '#')
			comment(r, s);
		if (!n || s[0] == '#' || s[0] == '"')
			continue;
		if (strncmp(s, "Tag=", 4) == 0) {
			char *comma = strchr(s + 4, ',');
			size_t len = comma ? (size_t)(comma - s - 4) : 0;
			if (!comma || len >= sizeof(l->tag))
				return why_set(why, whylen, "line %d: a tag "
					       "without its interval", r->line);
			memcpy(l->tag, s + 4, len);
			s = comma + 1;
		}
		l->text = interval_fields(s, l);
		if (!l->text)
			return why_set(why, whylen, "line %d: not an interval "
				       "(START,LENGTH,MAX,HISTOGRAM)", r->line);
		l->len = strlen(l->text);
		return 1;
	}
	if (ferror(r->in))
		return why_set(why, whylen, "line %d: %s", r->line + 1,
			       strerror(errno));
	return 0;
}

int hlog_read(struct hlog_reader *r, struct hlog_interval *iv, char *why,
	      size_t whylen)
{
	memset(&iv->h, 0, sizeof(iv->h));
	int got = hlog_read_line(r, &iv->line, why, whylen);
	char inner[256];
	if (got == 1 && hlog_decode(iv->line.text, iv->line.len, &iv->h, inner,
				    sizeof(inner)) < 0)
		return why_set(why, whylen, "line %d: %s", r->line, inner);
	return got;
}
