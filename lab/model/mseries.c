/*
 * mseries: windows of a run, each summarised from its own histogram when it
 * closes.
 */
#include "mseries.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mseries_init(struct mseries *s, int64_t window_us, int64_t duration_ns,
		 int64_t stall_us)
{
	memset(s, 0, sizeof(*s));
	if (window_us <= 0 || duration_ns <= 0 || stall_us <= 0) {
		errno = EINVAL;
		return -1;
	}
	s->window_ns = window_us * 1000;
	s->cap = (size_t)((duration_ns + s->window_ns - 1) / s->window_ns);
	s->stall_us = stall_us;
	/* One consumer waits one wait at a time, so stalls begin more than
	 * stall_us apart. */
	s->stalls_cap = (size_t)(duration_ns / (stall_us * 1000)) + 1;
	s->rows = calloc(s->cap, sizeof(*s->rows));
	s->stalls = calloc(s->stalls_cap, sizeof(*s->stalls));
	if (!s->rows || !s->stalls || hist_init_us(&s->cur) != 0) {
		mseries_free(s);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void close_window(struct mseries *s)
{
	results_window_of(&s->rows[s->nrows++], &s->cur);
	hist_reset(&s->cur);
}

/* Window index of t_ns, clamped to the run. */
static size_t window_of(const struct mseries *s, int64_t t_ns)
{
	if (t_ns < 0)
		return 0;
	size_t i = (size_t)(t_ns / s->window_ns);
	return i < s->cap ? i : s->cap - 1;
}

void mseries_record(struct mseries *s, int64_t t_ns, int64_t value_us)
{
	size_t w = window_of(s, t_ns);
	while (s->nrows < w)
		close_window(s);
	hist_record(&s->cur, value_us);
	if (value_us > s->stall_us && s->nstalls < s->stalls_cap)
		s->stalls[s->nstalls++] = (struct mseries_stall){ t_ns, value_us };
}

void mseries_finish(struct mseries *s, int64_t end_ns)
{
	size_t last = window_of(s, end_ns - 1);
	while (s->nrows <= last)
		close_window(s);
}

int mseries_write_csv(const struct mseries *s, FILE *out, const char *comment)
{
	results_series_header(out, comment, NULL);
	for (size_t i = 0; i < s->nrows; i++)
		results_series_row(out, (int64_t)i, s->window_ns, &s->rows[i],
				   NULL);
	return ferror(out) ? -1 : 0;
}

int mseries_write_events(const struct mseries *s, FILE *out,
			 const char *comment)
{
	results_comment(out, comment);
	fputs("t_s,kind,duration_ms,detail\n", out);
	for (size_t i = 0; i < s->nstalls; i++)
		fprintf(out, "%.3f,stall,%.3f,\"the consumer waited for the "
			"lock\"\n", (double)s->stalls[i].t_ns / 1e9,
			(double)s->stalls[i].wait_us / 1000.0);
	return ferror(out) ? -1 : 0;
}

void mseries_free(struct mseries *s)
{
	free(s->rows);
	free(s->stalls);
	s->rows = NULL;
	s->stalls = NULL;
	hist_free(&s->cur);
}
