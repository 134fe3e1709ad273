/*
 * sched: integer send-schedule arithmetic. Global packet g is due at
 * start + floor(g * 1e9 / rate) ns; for a fractional rate the numerator and
 * denominator are scaled by 1000 so rates like 0.5 pps stay exact enough.
 */
#include "sched.h"

#include <math.h>

/* rate in milli-packets per second, the unit the arithmetic uses */
static unsigned __int128 mrate(const struct sched *s)
{
	return (unsigned __int128)llround(s->rate * 1000.0);
}

uint64_t sched_total(double rate, double duration_s)
{
	double n = floor(rate * duration_s + 1e-9);
	return n < 1 ? 1 : (uint64_t)n;
}

void sched_init(struct sched *s, int64_t start_ns, double rate, uint64_t total,
		uint64_t k, uint64_t T)
{
	s->start_ns = start_ns;
	s->rate = rate;
	s->stride = T;
	s->offset = k;
	s->count = total > k ? (total - k + T - 1) / T : 0;
	s->next = 0;
}

int64_t sched_intended(const struct sched *s, uint64_t i)
{
	unsigned __int128 g = (unsigned __int128)i * s->stride + s->offset;
	return s->start_ns + (int64_t)(g * 1000000000000ULL / mrate(s));
}

uint64_t sched_due(const struct sched *s, int64_t now_ns)
{
	if (s->next >= s->count || now_ns < s->start_ns)
		return 0;
	/* the last global index whose time has come */
	unsigned __int128 g = (unsigned __int128)(now_ns - s->start_ns) *
			      mrate(s) / 1000000000000ULL;
	/* intended(g) rounds down, so g + 1 may be due too */
	while (s->start_ns + (int64_t)((g + 1) * 1000000000000ULL / mrate(s))
	       <= now_ns)
		g++;
	if (g < s->offset)
		return 0;
	unsigned __int128 last = (g - s->offset) / s->stride;	/* this thread's */
	uint64_t upto = last + 1 < s->count ? (uint64_t)last + 1 : s->count;
	return upto > s->next ? upto - s->next : 0;
}

int64_t sched_next_time(const struct sched *s)
{
	return s->next < s->count ? sched_intended(s, s->next) : INT64_MAX;
}

int64_t sched_wake_time(const struct sched *s, int64_t early_ns)
{
	int64_t t = sched_next_time(s);
	return t == INT64_MAX ? t : t - early_ns;
}

int64_t sched_spin_ns(const struct sched *s, int64_t now_ns, int64_t max_ns)
{
	int64_t t = sched_next_time(s);
	if (t == INT64_MAX || t <= now_ns)
		return 0;
	return t - now_ns < max_ns ? t - now_ns : max_ns;
}

void sched_advance(struct sched *s, uint64_t n)
{
	s->next += n;
	if (s->next > s->count)
		s->next = s->count;
}
