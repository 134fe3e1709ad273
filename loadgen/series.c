/* series: per-window latency percentiles, merged across threads. */
#include "series.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Two significant digits are plenty for a plotted window and keep each
 * window's histogram at about 18 KB. */
static int window_hist(struct hist *h)
{
	return hist_init(h, 1, 10 * 1000 * 1000, 2);
}

int series_init(struct series *s, int64_t start_ns, int64_t window_ns,
		int nthreads)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->start_ns = start_ns;
	s->window_ns = window_ns;
	s->nthreads = nthreads;
	s->thread_win = calloc((size_t)nthreads, sizeof(*s->thread_win));
	if (!s->thread_win) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void series_free(struct series *s)
{
	for (int i = 0; i < s->npending; i++)
		hist_free(&s->pending[i]);
	free(s->pending);
	free(s->rows);
	free(s->thread_win);
	pthread_mutex_destroy(&s->mu);
	memset(s, 0, sizeof(*s));
}

int series_local_init(struct series_local *l, struct series *s, int idx)
{
	l->s = s;
	l->idx = idx;
	l->win = 0;
	return window_hist(&l->h);
}

void series_local_free(struct series_local *l)
{
	hist_free(&l->h);
}

static int push_row(struct series *s, const struct hist *h)
{
	if (s->nrows == s->cap) {
		int64_t cap = s->cap ? s->cap * 2 : 256;
		struct results_window *r = realloc(s->rows,
						   (size_t)cap * sizeof(*r));
		if (!r)
			return -1;
		s->rows = r;
		s->cap = cap;
	}
	struct results_window *r = &s->rows[s->nrows++];
	if (h)
		results_window_of(r, h);
	else
		*r = (struct results_window){ 0 };
	return 0;
}

/* Make pending cover window w. Caller holds the lock. */
static struct hist *pending_at(struct series *s, int64_t w)
{
	int need = (int)(w - s->base + 1);
	if (need > s->npending) {
		struct hist *p = realloc(s->pending, (size_t)need * sizeof(*p));
		if (!p)
			return NULL;
		s->pending = p;
		for (; s->npending < need; s->npending++)
			if (window_hist(&s->pending[s->npending]) < 0)
				return NULL;
	}
	return &s->pending[w - s->base];
}

/* Turn every window all threads have left into a row. Caller holds lock. */
static void finalise(struct series *s)
{
	int64_t low = INT64_MAX;
	for (int i = 0; i < s->nthreads; i++)
		if (s->thread_win[i] < low)
			low = s->thread_win[i];
	while (s->base < low) {
		if (s->npending > 0) {
			push_row(s, &s->pending[0]);
			hist_free(&s->pending[0]);
			memmove(s->pending, s->pending + 1,
				(size_t)(s->npending - 1) * sizeof(*s->pending));
			s->npending--;
		} else if (low == INT64_MAX) {
			break;
		} else {
			push_row(s, NULL);
		}
		s->base++;
	}
}

/* Hand the current window over and move to window w. */
static void move_to(struct series_local *l, int64_t w)
{
	struct series *s = l->s;
	pthread_mutex_lock(&s->mu);
	if (hist_count(&l->h)) {
		struct hist *dst = pending_at(s, l->win);
		if (dst)
			hist_merge(dst, &l->h);
	}
	s->thread_win[l->idx] = w;
	finalise(s);
	pthread_mutex_unlock(&s->mu);
	hist_reset(&l->h);
	l->win = w;
}

static int64_t window_of(const struct series *s, int64_t now_ns)
{
	return now_ns <= s->start_ns ? 0 : (now_ns - s->start_ns) / s->window_ns;
}

void series_record(struct series_local *l, int64_t now_ns, int64_t value_us)
{
	int64_t w = window_of(l->s, now_ns);
	if (w > l->win)
		move_to(l, w);
	hist_record(&l->h, value_us);
}

void series_tick(struct series_local *l, int64_t now_ns)
{
	int64_t w = window_of(l->s, now_ns);
	if (w > l->win)
		move_to(l, w);
}

void series_finish(struct series_local *l)
{
	move_to(l, INT64_MAX);
}

int series_write_csv(const struct series *s, FILE *out, const char *header,
		     int64_t end_ns)
{
	int64_t nwin = (end_ns - s->start_ns + s->window_ns - 1) / s->window_ns;
	static const struct results_window none;
	results_series_header(out, header, NULL);
	for (int64_t i = 0; i < nwin; i++)
		results_series_row(out, i, s->window_ns,
				   i < s->nrows ? &s->rows[i] : &none, NULL);
	return ferror(out) ? -1 : 0;
}
