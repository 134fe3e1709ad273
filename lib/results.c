/* results: docs/formats.md percentile objects, .hgrm files, series rows. */
#include "results.h"

#include <math.h>
#include <string.h>

#include "newfile.h"

json_t *results_percentiles(const struct hist *h)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}",
			 "p50", (json_int_t)hist_percentile(h, 50.0),
			 "p90", (json_int_t)hist_percentile(h, 90.0),
			 "p99", (json_int_t)hist_percentile(h, 99.0),
			 "p99_9", (json_int_t)hist_percentile(h, 99.9),
			 "p99_99", (json_int_t)hist_percentile(h, 99.99),
			 "max", (json_int_t)hist_max(h),
			 "count", (json_int_t)hist_count(h),
			 "mean", round(hist_mean(h) * 10.0) / 10.0);
}

int results_hgrm(const struct hist *h, FILE *f)
{
	/* docs/formats.md: milliseconds, 5 ticks per half distance */
	return hist_write_hgrm(h, f, 1000.0, 5);
}

static int put_hgrm(FILE *f, const void *h)
{
	return results_hgrm(h, f);
}

int results_write_hgrm(const struct hist *h, const char *path, char *err,
		       size_t errlen)
{
	return newfile_write(path, put_hgrm, h, err, errlen);
}

void results_window_of(struct results_window *w, const struct hist *h)
{
	w->count = hist_count(h);
	w->p50_us = w->count ? hist_percentile(h, 50.0) : 0;
	w->p99_us = w->count ? hist_percentile(h, 99.0) : 0;
	w->max_us = w->count ? hist_max(h) : 0;
}

void results_comment(FILE *out, const char *text)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(out, "# %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

void results_series_header(FILE *out, const char *comment,
			   const char *extra_columns)
{
	results_comment(out, comment);
	fprintf(out, "t_s,count,p50_us,p99_us,max_us%s\n",
		extra_columns ? extra_columns : "");
}

static void cells(FILE *out, const struct results_window *w)
{
	if (w->count)
		fprintf(out, ",%llu,%lld,%lld,%lld",
			(unsigned long long)w->count, (long long)w->p50_us,
			(long long)w->p99_us, (long long)w->max_us);
	else
		fputs(",0,,,", out);
}

void results_series_row(FILE *out, int64_t index, int64_t window_ns,
			const struct results_window *w,
			const struct results_window *extra)
{
	fprintf(out, "%.3f", (double)(index + 1) * (double)window_ns / 1e9);
	cells(out, w);
	if (extra)
		cells(out, extra);
	fputc('\n', out);
}
