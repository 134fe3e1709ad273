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

#include "hlog.h"
#include "output.h"
#include "results.h"

/* The two histograms a loadgen log holds: untagged and Tag=uncorrected. */
enum { CORRECTED, UNCORRECTED, NSTREAMS };
static const char *const stream_names[NSTREAMS] = { "corrected",
						    "uncorrected" };

struct input {
	const char *path;
	struct hist h[NSTREAMS];
	bool has[NSTREAMS];
	int intervals;
};

/* The settings every histogram must share, and where they came from. */
struct reference {
	const char *path;
	int line;
	int64_t lowest, highest;
	int sigfigs;
};

static void usage(FILE *out)
{
	fputs(
"usage: loadgen merge --json OUT [--hgrm OUT] FILE.hlog...\n"
"\n"
"Adds the histograms of HdrHistogram interval logs (loadgen --hlog, or any\n"
"tool's, untagged intervals as corrected latency, Tag=uncorrected as\n"
"uncorrected) and writes the percentiles of the sum, with the same\n"
"latency_us fields as a run's JSON, and each input's beside them.\n"
"Inputs must share their histogram settings (lowest, highest, digits).\n"
"\n"
"  --json FILE           the merged result (required)\n"
"  --hgrm FILE           the merged corrected distribution (HdrHistogram\n"
"                        percentile format, ms) and FILE.uncorrected.hgrm\n"
"  -h, --help            this text\n"
"\n"
"exit: 0 done, 64 bad usage, 65 an input is corrupt, cut short, empty or\n"
"recorded with other settings, 66 an input cannot be read, 73 an output\n"
"cannot be written.\n", out);
}

static int same_settings(const struct reference *ref, const struct hist *h)
{
	return ref->lowest == h->lowest && ref->highest == h->highest &&
	       ref->sigfigs == h->sigfigs;
}

/* Add one interval into in; iv's histogram is taken over or freed. */
static int add_interval(struct input *in, struct hlog_interval *iv,
			struct reference *ref, int line)
{
	int s = iv->tag[0] == 0 ? CORRECTED
		: strcmp(iv->tag, "uncorrected") == 0 ? UNCORRECTED : -1;
	if (s < 0) {		/* another tool's stream: not ours to add */
		hist_free(&iv->h);
		return 0;
	}
	if (!ref->path) {
		*ref = (struct reference){ in->path, line, iv->h.lowest,
					   iv->h.highest, iv->h.sigfigs };
	} else if (!same_settings(ref, &iv->h)) {
		fprintf(stderr, "loadgen merge: %s line %d: histogram settings "
			"(lowest %lld, highest %lld, %d digits) differ from "
			"those of %s line %d (lowest %lld, highest %lld, %d "
			"digits): runs recorded differently do not merge\n",
			in->path, line, (long long)iv->h.lowest,
			(long long)iv->h.highest, iv->h.sigfigs, ref->path,
			ref->line, (long long)ref->lowest,
			(long long)ref->highest, ref->sigfigs);
		hist_free(&iv->h);
		return EX_DATAERR;
	}
	in->intervals++;
	if (!in->has[s]) {
		in->h[s] = iv->h;
		in->has[s] = true;
		return 0;
	}
	int rc = hist_merge(&in->h[s], &iv->h);
	hist_free(&iv->h);
	return rc < 0 ? EX_SOFTWARE : 0;
}

static int read_input(struct input *in, struct reference *ref)
{
	FILE *f = fopen(in->path, "r");
	if (!f) {
		fprintf(stderr, "loadgen merge: cannot read %s: %s\n", in->path,
			strerror(errno));
		return EX_NOINPUT;
	}
	struct hlog_reader r;
	struct hlog_interval iv;
	char why[512];
	int got, status = 0;
	hlog_reader_init(&r, f);
	while (!status && (got = hlog_read(&r, &iv, why, sizeof(why))) == 1)
		status = add_interval(in, &iv, ref, r.line);
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
	hlog_reader_free(&r);
	fclose(f);
	return status;
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

static void table_row(const char *name, const struct hist *h)
{
	printf("  %-40s %10llu", name, (unsigned long long)hist_count(h));
	for (int i = 0; i < 6; i++)
		printf(" %8lld", (long long)hist_percentile(h, output_pcts[i]));
	putchar('\n');
}

static void table(const struct input *in, int n, const struct hist *sum)
{
	printf("  %-40s %10s", "corrected latency (us)", "count");
	for (int i = 0; i < 6; i++)
		printf(" %8s", output_pct_keys[i]);
	putchar('\n');
	for (int i = 0; i < n; i++)
		table_row(in[i].path, &in[i].h[CORRECTED]);
	table_row("merged", sum);
}

static int write_outputs(const char *json, const char *hgrm,
			 const struct input *in, int n, const struct hist *sum,
			 const bool *has, const struct reference *ref)
{
	char err[4200];
	int status = 0;
	json_t *inputs = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(inputs, json_pack("{s:s, s:i, s:o}",
			"path", in[i].path, "intervals", in[i].intervals,
			"latency_us", latency_json(in[i].h, in[i].has)));
	json_t *j = json_pack("{s:s, s:I, s:o, s:o, s:{s:I, s:I, s:i}}",
		"tool", "loadgen merge",
		"count", (json_int_t)hist_count(&sum[CORRECTED]),
		"latency_us", latency_json(sum, has),
		"inputs", inputs,
		"histogram", "lowest", (json_int_t)ref->lowest,
		"highest", (json_int_t)ref->highest,
		"significant_digits", ref->sigfigs);
	if (output_write_json(json, j, err, sizeof(err)) < 0) {
		fprintf(stderr, "loadgen merge: %s\n", err);
		status = EX_CANTCREAT;
	}
	json_decref(j);
	for (int s = 0; hgrm && s < NSTREAMS; s++) {
		char un[4096];
		output_uncorrected_path(hgrm, un, sizeof(un));
		if (has[s] && results_write_hgrm(&sum[s], s ? un : hgrm, err,
						 sizeof(err)) < 0) {
			fprintf(stderr, "loadgen merge: %s\n", err);
			status = EX_CANTCREAT;
		}
	}
	return status;
}

/* Add every input's streams into sum; a stream is merged only when every
 * input has it (has[s]). */
static int add_up(struct input *in, int n, const struct reference *ref,
		  struct hist *sum, bool *has)
{
	for (int s = 0; s < NSTREAMS; s++) {
		has[s] = true;
		for (int i = 0; i < n; i++)
			has[s] = has[s] && in[i].has[s];
		if (hist_init(&sum[s], ref->lowest, ref->highest, ref->sigfigs) < 0)
			return EX_SOFTWARE;
		for (int i = 0; has[s] && i < n; i++)
			if (hist_merge(&sum[s], &in[i].h[s]) < 0)
				return EX_SOFTWARE;
	}
	return 0;
}

int merge_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "hgrm", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *json = NULL, *hgrm = NULL;
	int c;
	optind = 0;	/* start over (see opts_parse) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': json = optarg; break;
		case 'g': hgrm = optarg; break;
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
	struct hist sum[NSTREAMS];
	memset(sum, 0, sizeof(sum));
	bool has[NSTREAMS];
	struct reference ref = { 0 };
	int status = in ? 0 : EX_OSERR;
	for (int i = 0; !status && i < n; i++) {
		in[i].path = argv[optind + i];
		status = read_input(&in[i], &ref);
	}
	if (!status)
		status = add_up(in, n, &ref, sum, has);
	if (!status) {
		table(in, n, &sum[CORRECTED]);
		status = write_outputs(json, hgrm, in, n, sum, has, &ref);
	}
	for (int i = 0; in && i < n; i++)
		for (int s = 0; s < NSTREAMS; s++)
			hist_free(&in[i].h[s]);
	for (int s = 0; s < NSTREAMS; s++)
		hist_free(&sum[s]);
	free(in);
	return status;
}
