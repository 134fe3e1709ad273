/*
 * watch: throttled spans from cpu.stat's growth, late wake-ups from the
 * loops' rings, and each new one of either matched against the kept
 * others, so that a round costs the new ones, not all pairs.
 */
#include "watch.h"

#include <stdio.h>
#include <string.h>

static bool overlaps(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	return a0 <= b1 && b0 <= a1;
}

/* Count wake-up l for group g if it overlaps s, once. */
static void match(struct watch *w, int g, struct watch_late *l,
		  const struct watch_span *s)
{
	if (l->counted >> g & 1 ||
	    !overlaps(l->from_ns, l->to_ns, s->from_ns, s->to_ns))
		return;
	l->counted |= 1u << g;
	w->g[g].late[l->kind]++;
}

/* The kept entries of a ring of size n with count total: the last n. */
static uint64_t first_kept(uint64_t total, uint64_t n)
{
	return total > n ? total - n : 0;
}

void watch_late(struct watch *w, int64_t end_ns, int64_t late_ns,
		enum stats_wakeup kind)
{
	struct watch_late *l = &w->pend[w->npend++ % WATCH_PENDING];
	*l = (struct watch_late){ .from_ns = end_ns - late_ns,
				  .to_ns = end_ns, .kind = kind };
	for (int g = 0; g < w->n; g++) {
		const struct watch_group *wg = &w->g[g];
		for (uint64_t i = first_kept(wg->nspan, WATCH_SPANS);
		     i < wg->nspan; i++)
			match(w, g, l, &wg->span[i % WATCH_SPANS]);
	}
}

void watch_reading(struct watch *w, int g, const struct cg_stat *st,
		   int64_t now_ns)
{
	struct watch_group *wg = &w->g[g];
	const struct cg_stat *was = &wg->stat;
	bool first = !wg->read_ns;
	/* A group made anew under the same name starts from zero: its first
	 * reading is a new base, not a throttle. */
	bool reset = st->nr_throttled < was->nr_throttled ||
		     st->throttled_us < was->throttled_us;
	uint64_t added_us = st->throttled_us - was->throttled_us;
	bool throttled = !first && !reset &&
			 (st->nr_throttled > was->nr_throttled || added_us);
	int64_t since = wg->read_ns;
	wg->stat = *st;
	wg->read_ns = now_ns;
	wg->readable = true;
	if (!throttled)
		return;
	int64_t back = added_us > WATCH_HORIZON_NS / 1000 ? WATCH_HORIZON_NS :
		       (int64_t)added_us * 1000;
	struct watch_span *s = &wg->span[wg->nspan++ % WATCH_SPANS];
	*s = (struct watch_span){ .from_ns = since - back, .to_ns = now_ns };
	for (uint64_t i = first_kept(w->npend, WATCH_PENDING); i < w->npend;
	     i++) {
		struct watch_late *l = &w->pend[i % WATCH_PENDING];
		if (l->to_ns >= now_ns - WATCH_HORIZON_NS)
			match(w, g, l, s);
	}
}

void watch_poll(struct watch *w, struct stats *const *loops, int nloops,
		int64_t now_ns)
{
	if (!w->n)
		return;
	struct stats_late got[64];
	for (int i = 0; i < nloops && i < CONF_MAX_CPUS; i++) {
		int k;
		uint64_t lost;
		do {
			k = stats_late_read(loops[i], &w->cursor[i], got, 64,
					    &lost);
			w->lost += lost;
			for (int j = 0; j < k; j++)
				watch_late(w, got[j].end_ns, got[j].late_ns,
					   got[j].kind);
		} while (k == 64);
	}
	for (int g = 0; g < w->n; g++) {
		struct cg_stat st;
		if (cg_read_stat_dir(w->g[g].dir, 2, &st) < 0)
			w->g[g].readable = false;	/* gone: say so, keep what was */
		else
			watch_reading(w, g, &st, now_ns);
	}
}

void watch_configure(struct watch *w, const struct conf *c,
		     struct stats *const *loops, int nloops)
{
	struct watch_group was[CONF_MAX_WATCH];
	int nwas = w->n, from[CONF_MAX_WATCH];
	memcpy(was, w->g, sizeof(was));
	w->late_us = c->late_us;
	w->interval_ms = c->watch_interval_ms;
	w->n = c->nwatch;
	for (int g = 0; g < w->n; g++) {
		from[g] = -1;
		for (int k = 0; k < nwas && from[g] < 0; k++)
			if (strcmp(was[k].dir, c->watch[g].dir) == 0)
				from[g] = k;
		if (from[g] >= 0)
			w->g[g] = was[from[g]];
		else
			memset(&w->g[g], 0, sizeof(w->g[g]));
		snprintf(w->g[g].name, sizeof(w->g[g].name), "%s",
			 c->watch[g].name);
		snprintf(w->g[g].dir, sizeof(w->g[g].dir), "%s",
			 c->watch[g].dir);
	}
	/* A wake-up counted for a group that stays is not counted again. */
	for (uint64_t i = first_kept(w->npend, WATCH_PENDING); i < w->npend;
	     i++) {
		struct watch_late *l = &w->pend[i % WATCH_PENDING];
		uint32_t m = 0;
		for (int g = 0; g < w->n; g++)
			if (from[g] >= 0 && l->counted >> from[g] & 1)
				m |= 1u << g;
		l->counted = m;
	}
	/* Nothing was read while nothing was watched: start from now. */
	if (!nwas)
		for (int i = 0; i < nloops && i < CONF_MAX_CPUS; i++)
			w->cursor[i] = __atomic_load_n(&loops[i]->nlate,
						       __ATOMIC_ACQUIRE);
}
