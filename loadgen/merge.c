/* merge: read interval logs, refuse what does not add up, add the rest. */
#include "merge.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/sha.h>

#include "hlog.h"
#include "output.h"
#include "results.h"

/* The two histograms a loadgen log holds: untagged and Tag=uncorrected. */
enum { CORRECTED, UNCORRECTED, NSTREAMS };
static const char *const stream_names[NSTREAMS] = { "corrected",
						    "uncorrected" };

/* What is kept of an input once it has been added: its percentiles, not
 * its histograms, so that a merge of many holds two inputs' worth. */
struct input {
	const char *path;
	int intervals;
	bool has[NSTREAMS];
	json_t *latency;		/* its percentiles per stream */
	char interrupted[128];		/* its log's note; "" when whole */
	const char *same_as;		/* an earlier input it repeats */
	struct stat st;
	unsigned char digest[SHA256_DIGEST_LENGTH];
};

/* The settings every histogram must share, and where they came from. */
struct reference {
	const char *path;
	int line;
	int64_t lowest, highest;
	int sigfigs;
};

struct merge {
	bool partial_ok;		/* --partial */
	struct reference ref;		/* path NULL until the first interval */
	struct hist cur[NSTREAMS];	/* the input being read */
	struct hist sum[NSTREAMS];	/* every input read so far */
	bool every[NSTREAMS];		/* every input had the stream */
};

static void usage(FILE *out)
{
	fputs(
"usage: loadgen merge --json OUT [--hgrm OUT] [--partial] FILE.hlog...\n"
"\n"
"Adds the histograms of HdrHistogram interval logs (loadgen --hlog, or any\n"
"tool's, untagged intervals as corrected latency, Tag=uncorrected as\n"
"uncorrected) and writes the percentiles of the sum, with the same\n"
"latency_us fields as a run's JSON, and each input's beside them.\n"
"Inputs must share their histogram settings (lowest, highest, digits).\n"
"The log of a run that was stopped before its end says so and is refused\n"
"unless --partial is given.\n"
"\n"
"  --json FILE           the merged result (required)\n"
"  --hgrm FILE           the merged corrected distribution (HdrHistogram\n"
"                        percentile format, ms) and FILE.uncorrected.hgrm\n"
"  --partial             merge logs of interrupted runs too; the result\n"
"                        says \"partial\": true\n"
"  -h, --help            this text\n"
"\n"
"exit: 0 done, 64 bad usage, 65 an input is corrupt, cut short, empty,\n"
"recorded with other settings, of an interrupted run or its counts add\n"
"up past 2^63-1, 66 an input cannot be read, 73 an output cannot be\n"
"written.\n", out);
}

/* The file's identity and a digest of its bytes, to tell a file given
 * twice (under one name or two, or copied) before its counts are. */
static int identify(struct input *in, FILE *f)
{
	unsigned char buf[65536];
	size_t n;
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	int ok = md && fstat(fileno(f), &in->st) == 0 &&
		 EVP_DigestInit_ex(md, EVP_sha256(), NULL);
	while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		ok = EVP_DigestUpdate(md, buf, n);
	ok = ok && !ferror(f) && EVP_DigestFinal_ex(md, in->digest, NULL);
	EVP_MD_CTX_free(md);
	if (!ok || fseek(f, 0, SEEK_SET) < 0) {
		fprintf(stderr, "loadgen merge: cannot read %s: %s\n", in->path,
			errno ? strerror(errno) : "digest failed");
		return EX_NOINPUT;
	}
	return 0;
}

static void warn_repeat(struct input *in, const struct input *earlier)
{
	for (const struct input *e = earlier; e < in; e++) {
		bool same_file = e->st.st_dev == in->st.st_dev &&
				 e->st.st_ino == in->st.st_ino;
		if (!same_file && memcmp(e->digest, in->digest,
					 sizeof(in->digest)) != 0)
			continue;
		fprintf(stderr, "loadgen merge: warning: %s %s %s: its counts "
			"are added twice\n", in->path, same_file
			? "is the same file as" : "has the same content as",
			e->path);
		in->same_as = e->path;
		return;
	}
}

/* The first histogram of all: its settings become the reference, and the
 * histograms everything else is added into get them. */
static int first_interval(struct merge *m, struct input *in,
			  const struct hlog_line *l, int line, int s)
{
	struct hist h;
	char why[512];
	if (hlog_decode(l->text, l->len, &h, why, sizeof(why)) < 0) {
		fprintf(stderr, "loadgen merge: %s: line %d: %s\n", in->path,
			line, why);
		return EX_DATAERR;
	}
	m->ref = (struct reference){ in->path, line, h.lowest, h.highest,
				     h.sigfigs };
	int rc = 0;
	for (int i = 0; i < NSTREAMS && !rc; i++)
		rc = hist_init(&m->cur[i], h.lowest, h.highest, h.sigfigs) |
		     hist_init(&m->sum[i], h.lowest, h.highest, h.sigfigs);
	if (!rc)
		rc = hist_merge(&m->cur[s], &h);
	hist_free(&h);
	if (rc < 0) {
		fprintf(stderr, "loadgen merge: out of memory\n");
		return EX_OSERR;
	}
	return 0;
}

/* Add one interval line of in into m->cur, decoding it there. */
static int add_interval(struct merge *m, struct input *in,
			const struct hlog_line *l, int line)
{
	int s = l->tag[0] == 0 ? CORRECTED
		: strcmp(l->tag, "uncorrected") == 0 ? UNCORRECTED : -1;
	if (s < 0)		/* another tool's stream: not ours to add */
		return 0;
	in->intervals++;
	in->has[s] = true;
	if (!m->ref.path)
		return first_interval(m, in, l, line, s);
	char why[512];
	if (hlog_decode_add(l->text, l->len, &m->cur[s], why, sizeof(why)) == 0)
		return 0;
	const struct reference *ref = &m->ref;
	if (errno == EDOM)
		fprintf(stderr, "loadgen merge: %s line %d: %s from those of "
			"%s line %d (lowest %lld, highest %lld, %d digits): "
			"runs recorded differently do not merge\n", in->path,
			line, why, ref->path, ref->line, (long long)ref->lowest,
			(long long)ref->highest, ref->sigfigs);
	else
		fprintf(stderr, "loadgen merge: %s: line %d: %s\n", in->path,
			line, why);
	return EX_DATAERR;
}

/* m->cur, in's histograms, into m->sum: refused when a total would pass
 * what a count can hold (an int64 in every reader of the format). */
static int add_to_sum(struct merge *m, const struct input *in)
{
	for (int s = 0; s < NSTREAMS; s++) {
		uint64_t have = hist_count(&m->sum[s]),
			 add = hist_count(&m->cur[s]);
		if (have > INT64_MAX - add) {
			fprintf(stderr, "loadgen merge: %s: its %llu %s values "
				"and the %llu of the inputs before it add up "
				"past 2^63-1\n", in->path,
				(unsigned long long)add, stream_names[s],
				(unsigned long long)have);
			return EX_DATAERR;
		}
	}
	for (int s = 0; s < NSTREAMS; s++)
		if (hist_merge(&m->sum[s], &m->cur[s]) < 0)
			return EX_SOFTWARE;
	return 0;
}

static json_t *latency_json(const struct hist *h, const bool *has)
{
	json_t *j = json_object();
	for (int s = 0; s < NSTREAMS; s++)
		if (has[s])
			json_object_set_new(j, stream_names[s],
					    results_percentiles(&h[s]));
	return j;
}

/* The lines of the log in f into m->cur; status 0 or an exit status. */
static int read_log(struct merge *m, struct input *in, FILE *f)
{
	struct hlog_reader r;
	struct hlog_line l;
	char why[512];
	int got, status = 0;
	hlog_reader_init(&r, f);
	while (!status && (got = hlog_read_line(&r, &l, why, sizeof(why))) == 1)
		status = add_interval(m, in, &l, r.line);
	if (!status && got < 0) {
		fprintf(stderr, "loadgen merge: %s: %s\n", in->path, why);
		status = EX_DATAERR;
	}
	if (!status && !in->has[CORRECTED]) {
		fprintf(stderr, "loadgen merge: %s: no untagged interval "
			"histogram in %d lines (not an HdrHistogram interval "
			"log, or empty)\n", in->path, r.line);
		status = EX_DATAERR;
	}
	if (!status && r.interrupted_line) {
		snprintf(in->interrupted, sizeof(in->interrupted), "%s",
			 r.interrupted);
		if (!m->partial_ok) {
			fprintf(stderr, "loadgen merge: %s line %d: the run "
				"was interrupted (%s): its log holds part of "
				"the run; --partial merges it anyway\n",
				in->path, r.interrupted_line, r.interrupted);
			status = EX_DATAERR;
		}
	}
	hlog_reader_free(&r);
	return status;
}

static int read_input(struct merge *m, struct input *in,
		      const struct input *earlier)
{
	FILE *f = fopen(in->path, "r");
	if (!f) {
		fprintf(stderr, "loadgen merge: cannot read %s: %s\n", in->path,
			strerror(errno));
		return EX_NOINPUT;
	}
	int status = identify(in, f);
	if (!status) {
		warn_repeat(in, earlier);
		status = read_log(m, in, f);
	}
	fclose(f);
	if (!status)
		status = add_to_sum(m, in);
	if (!status)
		in->latency = latency_json(m->cur, in->has);
	for (int s = 0; s < NSTREAMS; s++) {
		m->every[s] = m->every[s] && in->has[s];
		if (in->has[s])
			hist_reset(&m->cur[s]);
	}
	return status;
}

static void table_row(const char *name, json_t *latency)
{
	json_t *c = json_object_get(latency, stream_names[CORRECTED]);
	printf("  %-40s %10lld", name, (long long)json_integer_value(
		       json_object_get(c, "count")));
	for (int i = 0; i < 6; i++)
		printf(" %8lld", (long long)json_integer_value(
			       json_object_get(c, output_pct_keys[i])));
	putchar('\n');
}

static void table(const struct input *in, int n, json_t *merged)
{
	printf("  %-40s %10s", "corrected latency (us)", "count");
	for (int i = 0; i < 6; i++)
		printf(" %8s", output_pct_keys[i]);
	putchar('\n');
	for (int i = 0; i < n; i++)
		table_row(in[i].path, in[i].latency);
	table_row("merged", merged);
}

static json_t *input_json(const struct input *in)
{
	return json_pack("{s:s, s:i, s:O, s:b, s:o, s:o}",
		"path", in->path, "intervals", in->intervals,
		"latency_us", in->latency,
		"interrupted", in->interrupted[0] != 0,
		"interrupted_why", in->interrupted[0]
			? json_string(in->interrupted) : json_null(),
		"same_as", in->same_as ? json_string(in->same_as)
				       : json_null());
}

static int write_outputs(const char *json, const char *hgrm,
			 const struct input *in, int n, const struct merge *m)
{
	char err[4200];
	int status = 0;
	bool partial = false;
	json_t *inputs = json_array();
	for (int i = 0; i < n; i++) {
		json_array_append_new(inputs, input_json(&in[i]));
		partial = partial || in[i].interrupted[0];
	}
	json_t *latency = latency_json(m->sum, m->every);
	table(in, n, latency);
	const struct reference *ref = &m->ref;
	json_t *j = json_pack("{s:s, s:I, s:O, s:b, s:o, s:{s:I, s:I, s:i}}",
		"tool", "loadgen merge",
		"count", (json_int_t)hist_count(&m->sum[CORRECTED]),
		"latency_us", latency,
		"partial", partial,
		"inputs", inputs,
		"histogram", "lowest", (json_int_t)ref->lowest,
		"highest", (json_int_t)ref->highest,
		"significant_digits", ref->sigfigs);
	json_decref(latency);
	if (output_write_json(json, j, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen merge: %s\n", err);
		status = EX_CANTCREAT;
	}
	json_decref(j);
	for (int s = 0; hgrm && s < NSTREAMS; s++) {
		char un[4096];
		output_uncorrected_path(hgrm, un, sizeof(un));
		if (m->every[s] && results_write_hgrm(&m->sum[s], s ? un : hgrm,
						      err, sizeof(err)) < 0) {
			fprintf(stderr, "loadgen merge: %s\n", err);
			status = EX_CANTCREAT;
		}
	}
	return status;
}

const struct option merge_longopts[] = {
	{ "json", required_argument, NULL, 'j' },
	{ "hgrm", required_argument, NULL, 'g' },
	{ "partial", no_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int merge_main(int argc, char **argv)
{
	const char *json = NULL, *hgrm = NULL;
	struct merge m = { .every = { true, true } };
	int c;
	optind = 0;	/* start over (see opts_parse) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", merge_longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = optarg; break;
		case 'g': hgrm = optarg; break;
		case 'p': m.partial_ok = true; break;
		case 'h': usage(stdout); return 0;
		case ':':
			fprintf(stderr, "loadgen merge: option '%s' needs a "
				"value\n", argv[optind - 1]);
			return EX_USAGE;
		default:
			fprintf(stderr, "loadgen merge: unknown option '%s' "
				"(see loadgen merge --help)\n", argv[optind - 1]);
			return EX_USAGE;
		}
	}
	int n = argc - optind;
	if (!json || n < 1) {
		fprintf(stderr, "loadgen merge: %s (see loadgen merge --help)\n",
			!json ? "--json OUT is required"
			      : "no input FILE.hlog given");
		return EX_USAGE;
	}
	struct input *in = calloc((size_t)n, sizeof(*in));
	int status = in ? 0 : EX_OSERR;
	for (int i = 0; !status && i < n; i++) {
		in[i].path = argv[optind + i];
		status = read_input(&m, &in[i], in);
	}
	if (!status)
		status = write_outputs(json, hgrm, in, n, &m);
	for (int i = 0; in && i < n; i++)
		json_decref(in[i].latency);
	for (int s = 0; s < NSTREAMS; s++) {
		hist_free(&m.cur[s]);
		hist_free(&m.sum[s]);
	}
	free(in);
	return status;
}
