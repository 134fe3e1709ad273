/*
 * hlog: HdrHistogram's interval log (format version 1.3), the file that
 * HdrHistogram's own tools in Java, C, Python and JavaScript read and write.
 *
 * A log is comment lines ("#[StartTime: ...]"), a column legend, then one
 * line per interval: [Tag=NAME,]START,LENGTH,MAX,HISTOGRAM where HISTOGRAM
 * is the V2 compressed encoding in base64: a big-endian header (cookie,
 * lengths, the histogram's settings), then the counts array as ZigZag
 * LEB128 varints with runs of zeros folded into one negative number, all
 * DEFLATE-compressed by zlib. The counts array is struct hist's own: the
 * bucket layout is HdrHistogram's, so no value moves in either direction.
 */
#ifndef RELAY_HLOG_H
#define RELAY_HLOG_H

#include <stddef.h>
#include <stdio.h>

#include "hist.h"

/* h as HdrHistogram's compressed V2 encoding, in base64: a NUL-terminated
 * string to free(), or NULL (errno ENOMEM). */
char *hlog_encode(const struct hist *h);

/* The largest histogram a log may bring: 2^20 slots (8 MB of counts),
 * room for any range at up to 4 significant digits and for 5 digits up
 * to 2^24 times lowest. What a reader does with a histogram (add it, find
 * its percentiles) passes over every slot, so the slots a line may ask
 * for are the work it may cause. */
#define HLOG_MAX_SLOTS (1 << 20)

/* Decode the base64 text of n bytes into h, initialised here with the
 * settings the encoding carries (hist_free it); more than HLOG_MAX_SLOTS
 * slots are refused, and so is a payload longer than the slots' counts
 * can take, before anything is allocated for it. Returns 0, or -1 with
 * why filled and h left with no counts array. */
int hlog_decode(const char *text, size_t n, struct hist *h, char *why,
		size_t whylen);

/* Add the counts the base64 text of n bytes encodes into h, which must
 * have the settings the encoding carries. Allocates at most what both the
 * text can inflate to and h's slots can take, and works in proportion to
 * the text, whatever h's size: the way to add up many intervals. Returns
 * 0, or -1 with why filled and errno EDOM (other settings: why says
 * which) or EINVAL (damage, or a total past 2^63-1); some counts may then
 * have been added to h. */
int hlog_decode_add(const char *text, size_t n, struct hist *h, char *why,
		    size_t whylen);

/* Write the log's header: comment (NULL: none) as a "#[...]" line, the
 * format version, StartTime and BaseTime (both start_unix_s: the intervals'
 * times are relative to it) and the legend. Returns 0, or -1. */
int hlog_write_header(FILE *out, const char *comment, double start_unix_s);

/* Write one interval of h: tag (NULL: untagged), start and length in
 * seconds, the max column as hist_max / max_scale (1000 puts us in ms).
 * Returns 0, or -1 (errno). */
int hlog_write_interval(FILE *out, const char *tag, double start_s,
			double length_s, const struct hist *h, double max_scale);

/* The comment a log carries when its run was stopped before the end it
 * was given: "#[Interrupted: WHY]". Readers of the format skip "#" lines;
 * hlog_read_line notes it. */
#define HLOG_INTERRUPTED "#[Interrupted: "

/* Write the interrupted comment with why (e.g. "stopped after 1.5 of
 * 10.0 s"), after the header. Returns 0, or -1 (errno). */
int hlog_write_interrupted(FILE *out, const char *why);

/* Reading a log one interval at a time. */
struct hlog_reader {
	FILE *in;
	int line;		/* of the last line read */
	int interrupted_line;	/* of the interrupted comment; 0: none yet */
	char interrupted[128];	/* its WHY */
	char *buf;
	size_t cap;
};

/* One interval line: its tag ("" when untagged), times and histogram text
 * (base64, len bytes, in the reader's buffer until the next read). */
struct hlog_line {
	char tag[64];
	double start_s, length_s;
	const char *text;
	size_t len;
};

/* One interval as read, its histogram decoded. */
struct hlog_interval {
	struct hlog_line line;
	struct hist h;
};

/* Read from in (which the caller opens and closes). */
void hlog_reader_init(struct hlog_reader *r, FILE *in);
void hlog_reader_free(struct hlog_reader *r);

/* The next interval line into l, its histogram not decoded: returns 1, 0
 * at the end of the log, or -1 with why filled ("line N: ..."): a line
 * that is not an interval or a last line without its newline (a file cut
 * short). */
int hlog_read_line(struct hlog_reader *r, struct hlog_line *l, char *why,
		   size_t whylen);

/* The next interval into iv, decoded (hist_free iv->h after use): as
 * hlog_read_line, and -1 too for a histogram that does not decode. */
int hlog_read(struct hlog_reader *r, struct hlog_interval *iv, char *why,
	      size_t whylen);

#endif
