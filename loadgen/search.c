/* search: where a capacity search goes next, and what its searches say. */
#include "search.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void search_start(struct search *s, double from, double to,
		  double resolution_pct)
{
	memset(s, 0, sizeof(*s));
	s->from = from;
	s->to = to;
	s->resolution = resolution_pct / 100;
	s->rate = s->start = from;
	s->factor = 2;
	s->end = SEARCH_RUNNING;
}

void search_start_warm(struct search *s, double from, double to,
		       double resolution_pct, double start)
{
	search_start(s, from, to, resolution_pct);
	s->rate = s->start = fmin(fmax(start, from), to);
	s->factor = fmin(1 + 4 * s->resolution, 2);
	s->warm = true;
}

/* Whole packets per second while the step to rate is over 2 pps: rates
 * that read the same in every search and every table. */
static double whole(double rate, double step)
{
	return step > 2 ? round(rate) : rate;
}

/* The next step up or down from rate, a factor away; a warm search's
 * factor then grows, until it brackets the capacity, towards a cold
 * one's 2. */
static double next(struct search *s, double rate, bool up)
{
	double r = up ? rate * s->factor : rate / s->factor;
	if (!s->warm)
		return r;
	s->factor = fmin(s->factor * s->factor, 2);
	return whole(r, fabs(r - rate));
}

void search_step(struct search *s, enum search_outcome out, double achieved)
{
	s->steps++;
	if (out == SEARCH_SENDER) {
		s->ceiling = s->rate;
		s->sent = achieved;
		s->end = SEARCH_AT_SENDER;
		return;
	}
	if (out == SEARCH_MET)
		s->met = s->rate;
	else
		s->missed = s->rate;
	if (!s->met) {			/* none met yet */
		if (s->rate <= s->from) {	/* not even from */
			s->end = SEARCH_NONE;
			return;
		}
		s->rate = fmax(next(s, s->rate, false), s->from);
		return;
	}
	if (!s->missed) {		/* still growing */
		if (s->met >= s->to)
			s->end = SEARCH_AT_TO;
		s->rate = fmin(next(s, s->met, true), s->to);
		return;
	}
	if (s->missed - s->met <= s->met * s->resolution) {
		s->end = SEARCH_FOUND;
		return;
	}
	s->rate = whole((s->met + s->missed) / 2, s->missed - s->met);
}

double search_capacity(const struct search *s)
{
	return s->met;
}

void search_text(const struct search *s, char *buf, size_t len)
{
	switch (s->end) {
	case SEARCH_FOUND:
		snprintf(buf, len, "%.10g pps met, %.10g pps missed (within "
			 "%g %%)", s->met, s->missed, s->resolution * 100);
		break;
	case SEARCH_NONE:
		snprintf(buf, len, "--from %.10g pps missed", s->from);
		break;
	case SEARCH_AT_TO:
		snprintf(buf, len, "--to %.10g pps met: loadgen may try no "
			 "higher", s->to);
		break;
	case SEARCH_AT_SENDER:
		snprintf(buf, len, "%.10g pps met; at %.10g pps loadgen sent "
			 "%.0f pps while the target kept up", s->met,
			 s->ceiling, s->sent);
		break;
	case SEARCH_RUNNING:
	case SEARCH_STOPPED:
		if (s->met)
			snprintf(buf, len, "interrupted, %.10g pps met so far",
				 s->met);
		else
			snprintf(buf, len, "interrupted");
		break;
	}
}

const char *search_end_name(enum search_end e)
{
	static const char *names[] = {
		[SEARCH_RUNNING] = "running", [SEARCH_FOUND] = "found",
		[SEARCH_NONE] = "none", [SEARCH_AT_TO] = "to",
		[SEARCH_AT_SENDER] = "sender", [SEARCH_STOPPED] = "stopped",
	};
	return names[e];
}

int search_rates(const struct search_trial *t, int n, struct search_rate *out)
{
	int k = 0;
	for (int i = 0; i < n; i++) {
		int j = 0;
		while (j < k && out[j].rate < t[i].rate)
			j++;
		if (j == k || out[j].rate != t[i].rate) {
			memmove(out + j + 1, out + j, (size_t)(k - j) * sizeof(*out));
			out[j] = (struct search_rate){ .rate = t[i].rate };
			k++;
		}
		out[j].runs++;
		out[j].met += t[i].out == SEARCH_MET;
	}
	return k;
}

int search_nonmonotonic(const struct search_trial *t, int n, int *bad,
			int *top)
{
	int k = 0;
	*top = -1;
	for (int i = 0; i < n; i++)
		if (t[i].out == SEARCH_MET && (*top < 0 || t[i].rate > t[*top].rate))
			*top = i;
	for (int i = 0; *top >= 0 && i < n; i++) {
		if (t[i].out != SEARCH_MISSED || t[i].rate >= t[*top].rate)
			continue;
		int j = k++;
		for (; j > 0 && t[bad[j - 1]].rate > t[i].rate; j--)
			bad[j] = bad[j - 1];
		bad[j] = i;
	}
	return k;
}

static bool at_ceiling(const struct search *s)
{
	return s->end == SEARCH_AT_TO || s->end == SEARCH_AT_SENDER;
}

/* Lower capacities first; of equal ones, those found before those that
 * are a lower bound. */
static int by_capacity(const void *a, const void *b)
{
	const struct search *x = *(const struct search *const *)a;
	const struct search *y = *(const struct search *const *)b;
	double cx = search_capacity(x), cy = search_capacity(y);
	if (cx != cy)
		return cx < cy ? -1 : 1;
	return (int)at_ceiling(x) - (int)at_ceiling(y);
}

void search_summarize(const struct search *s, int n,
		      struct search_summary *sum)
{
	const struct search *found[SEARCH_MAX];
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < n && i < SEARCH_MAX; i++) {
		if (s[i].end == SEARCH_RUNNING || s[i].end == SEARCH_STOPPED)
			continue;
		sum->n++;
		sum->none += s[i].end == SEARCH_NONE;
		if (search_capacity(&s[i]) > 0)
			found[sum->found++] = &s[i];
		if (s[i].end == SEARCH_AT_TO && !sum->at_to++)
			sum->to = &s[i];
		if (s[i].end == SEARCH_AT_SENDER && !sum->at_sender++)
			sum->sender = &s[i];
	}
	sum->unstable = sum->found && sum->none;
	if (!sum->found)
		return;
	qsort(found, (size_t)sum->found, sizeof(*found), by_capacity);
	sum->min = search_capacity(found[0]);
	sum->max = search_capacity(found[sum->found - 1]);
	/* The lowest and the highest of k independent draws hold the
	 * distribution's median but when all k fall on one side of it. */
	if (sum->found >= 2)
		sum->confidence = 1 - ldexp(1, 1 - sum->found);
	if (sum->unstable)
		return;
	sum->mid = found[(sum->found - 1) / 2];
	sum->median = search_capacity(sum->mid);
	sum->at_least = at_ceiling(sum->mid);
}

/* Append to buf what fmt says. */
static void add(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

void search_verdict(const struct search *s, int n, bool monotonic,
		    const char *objectives, char *buf, size_t len)
{
	struct search_summary m;
	search_summarize(s, n, &m);
	buf[0] = 0;
	if (!m.n) {
		add(buf, len, "capacity unknown: interrupted before a search "
		    "ended");
		return;
	}
	if (m.unstable) {
		add(buf, len, "capacity unstable: found in %d of %d independent "
		    "searches (", m.found, m.n);
		if (m.min < m.max)
			add(buf, len, "%.10g-", m.min);
		add(buf, len, "%.10g pps), none in %d (--from %.10g pps missed)",
		    m.max, m.none, s[0].from);
	} else if (m.median > 0) {
		add(buf, len, "capacity %s%.10g pps", m.at_least ? "at least "
		    : "", m.median);
	} else if (m.none) {
		add(buf, len, "capacity none: below --from %.10g pps (it "
		    "missed in %d of %d searches)", s[0].from, m.none, m.n);
	} else {
		add(buf, len, "capacity unknown");
	}
	if (m.median > 0 && m.found > 1)
		add(buf, len, " (median of %d independent searches, %.10g-%.10g "
		    "over them)", m.found, m.min, m.max);
	else if (m.median > 0 && m.mid->end == SEARCH_FOUND)
		add(buf, len, " (%.10g missed)", m.mid->missed);
	add(buf, len, ", resolution %g %%, %s", s[0].resolution * 100,
	    objectives);
	/* loadgen's own limits, never the target's capacity */
	if (m.to)
		add(buf, len, "; ceiling: --to %.10g pps met in %d of %d "
		    "searches: loadgen may try no higher", m.to->to, m.at_to,
		    m.n);
	if (m.sender)
		add(buf, len, "; ceiling: at %.10g pps loadgen sent %.0f pps "
		    "while the target kept up (%d of %d searches): the load "
		    "generator, not the target, is the limit",
		    m.sender->ceiling, m.sender->sent, m.at_sender, m.n);
	if (!monotonic)
		add(buf, len, "; not monotonic: a rate missed below one that "
		    "met (see the rates)");
}
