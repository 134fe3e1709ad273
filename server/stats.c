/*
 * stats: counters and histograms of the loop threads, merged for readers.
 */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "newfile.h"
#include "rt.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)

_Static_assert(STATS_NCOUNTERS <= 64 && STATS_NDROPS <= 64,
	       "STATS_LMASK and the others are 64 bits");

#define NAME(name, help) #name,
static const char *counter_name[] = { STATS_COUNTERS(NAME) };
static const char *drop_name[] = { STATS_DROPS(NAME) };
static const char *error_name[] = { STATS_ERRORS(NAME) };
static const char *wakeup_name[] = { STATS_WAKEUPS(NAME) };
#undef NAME

int stats_init(struct stats *s, int64_t start_ns)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < STATS_MAX_LISTEN; i++)
		s->listener[i].id = -1;
	for (int i = 0; i < STATS_MAX_UPSTREAM; i++)
		s->upstream[i].id = -1;
	s->start_ns = start_ns;
	s->win_end_ns = start_ns + STATS_WINDOW_NS;
	s->rows = calloc(STATS_ROWS, sizeof(*s->rows));
	if (!s->rows || hist_init_us(&s->rx) || hist_init_us(&s->wake) ||
	    hist_init_us(&s->tick) || hist_init_us(&s->win_rx) ||
	    hist_init_us(&s->win_tick)) {
		stats_free(s);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void stats_free(struct stats *s)
{
	hist_free(&s->rx);
	hist_free(&s->wake);
	hist_free(&s->tick);
	hist_free(&s->win_rx);
	hist_free(&s->win_tick);
	free(s->rows);
	s->rows = NULL;
}

void stats_part_reset(struct stats_part *p, int id)
{
	/* Atomic stores: the admin thread may be reading the old id's. */
	for (int i = 0; i < STATS_NCOUNTERS; i++)
		__atomic_store_n(&p->counter[i], 0, __ATOMIC_RELAXED);
	for (int i = 0; i < STATS_NDROPS; i++)
		__atomic_store_n(&p->drop[i], 0, __ATOMIC_RELAXED);
	stats_set(&p->flows_active, 0);
	__atomic_store_n(&p->id, id, __ATOMIC_RELEASE);
}

void stats_record_rx(struct stats *s, int64_t us)
{
	hist_record(&s->rx, us);
	hist_record(&s->win_rx, us);
}

/* Only a late wake-up costs a clock read and a ring slot (and, for an
 * AF_UNIX sender, a look at its policy), so that the loop's usual path
 * stays as it was. The slot of note k is the slot of note k - RING too,
 * so its fields are atomics, each a release store: a reader that loads
 * one of them (acquire) sees what the loop stored before it, the count
 * nlate = k that says note k - RING is being overwritten, and so loads a
 * count of k or more after the slot, and drops slot k - RING
 * (stats_late_read). The release store of nlate = k + 1 after them
 * publishes note k. (Release stores rather than a fence before them:
 * TSan does not model fences.) */
static void note_late(struct stats *s, enum stats_wakeup kind, int64_t us)
{
	struct stats_late *l = &s->late[s->nlate % STATS_LATE_RING];
	__atomic_store_n(&l->end_ns, clock_ns(CLOCK_MONOTONIC),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&l->late_ns, us * 1000, __ATOMIC_RELEASE);
	__atomic_store_n(&l->kind, (int)kind, __ATOMIC_RELEASE);
	__atomic_store_n(&s->nlate, s->nlate + 1, __ATOMIC_RELEASE);
	stats_add(&s->late_wakeups[kind], 1);
}

static bool late(const struct stats *s, int64_t us)
{
	return s->late_us && us >= s->late_us;
}

void stats_record_tick(struct stats *s, int64_t us)
{
	hist_record(&s->tick, us);
	hist_record(&s->win_tick, us);
	if (late(s, us))
		note_late(s, W_tick, us);
}

void stats_record_wake(struct stats *s, enum stats_wakeup kind, int64_t us,
		       int sender)
{
	hist_record(&s->wake, us);
	if (!late(s, us))
		return;
	/* Unknown (a UDP sender, or one gone since) stays what it was: a
	 * sender relay cannot name may be the RT client the fix protects. */
	if (sender > 0 && rt_task_realtime(sender) == 0)
		kind = W_non_rt_sender;
	note_late(s, kind, us);
}

int stats_late_read(const struct stats *s, uint64_t *cursor,
		    struct stats_late *out, int max, uint64_t *lost)
{
	uint64_t end = __atomic_load_n(&s->nlate, __ATOMIC_ACQUIRE);
	uint64_t from = *cursor;
	*lost = 0;
	if (end - from > STATS_LATE_RING) {
		*lost = end - from - STATS_LATE_RING;
		from = end - STATS_LATE_RING;
	}
	int n = 0;
	for (uint64_t i = from; i < end && n < max; i++, n++) {
		const struct stats_late *l = &s->late[i % STATS_LATE_RING];
		/* Acquire: the count below is read after the slot is. */
		out[n].end_ns = __atomic_load_n(&l->end_ns, __ATOMIC_ACQUIRE);
		out[n].late_ns = __atomic_load_n(&l->late_ns, __ATOMIC_ACQUIRE);
		out[n].kind = __atomic_load_n(&l->kind, __ATOMIC_ACQUIRE);
	}
	/* Slots the loop reused while they were read are not these, nor the
	 * one it may be writing now (note_late): the oldest of a full ring. */
	uint64_t now = __atomic_load_n(&s->nlate, __ATOMIC_ACQUIRE);
	int skip = 0;
	if (now - from >= STATS_LATE_RING)
		skip = (int)(now - from - STATS_LATE_RING + 1);
	if (skip > n)
		skip = n;
	memmove(out, out + skip, sizeof(*out) * (size_t)(n - skip));
	*lost += (uint64_t)skip;
	*cursor = from + (uint64_t)n;
	return n - skip;
}

void stats_roll_window(struct stats *s, int64_t now_ns, bool final)
{
	if (now_ns < s->win_end_ns && !final)
		return;
	struct stats_row *r = &s->rows[s->nrows % STATS_ROWS];
	r->window = (s->win_end_ns - s->start_ns) / STATS_WINDOW_NS - 1;
	results_window_of(&r->tick, &s->win_tick);
	results_window_of(&r->rx, &s->win_rx);
	s->nrows++;
	if (r->tick.count)
		hist_reset(&s->win_tick);
	if (r->rx.count)
		hist_reset(&s->win_rx);
	s->win_end_ns = s->start_ns + ((now_ns - s->start_ns) / STATS_WINDOW_NS
				       + 1) * STATS_WINDOW_NS;
}

int stats_snapshot_init(struct stats_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (hist_init_us(&snap->rx) || hist_init_us(&snap->wake) ||
	    hist_init_us(&snap->tick)) {
		stats_snapshot_free(snap);
		return -1;
	}
	return 0;
}

void stats_snapshot_free(struct stats_snapshot *snap)
{
	hist_free(&snap->rx);
	hist_free(&snap->wake);
	hist_free(&snap->tick);
}

void stats_snapshot_take(struct stats_snapshot *snap, struct stats *const *s,
			 int n)
{
	memset(snap->counter, 0, sizeof(snap->counter));
	memset(snap->drop, 0, sizeof(snap->drop));
	memset(snap->error, 0, sizeof(snap->error));
	memset(snap->late_wakeups, 0, sizeof(snap->late_wakeups));
	snap->flows_active = 0;
	hist_reset(&snap->rx);
	hist_reset(&snap->wake);
	hist_reset(&snap->tick);
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < STATS_NCOUNTERS; j++)
			snap->counter[j] += LOAD(&s[i]->counter[j]);
		for (int j = 0; j < STATS_NDROPS; j++)
			snap->drop[j] += LOAD(&s[i]->drop[j]);
		for (int j = 0; j < STATS_NERRORS; j++)
			snap->error[j] += LOAD(&s[i]->error[j]);
		for (int j = 0; j < STATS_NWAKEUPS; j++)
			snap->late_wakeups[j] += LOAD(&s[i]->late_wakeups[j]);
		snap->flows_active += LOAD(&s[i]->flows_active);
		hist_merge(&snap->rx, &s[i]->rx);
		hist_merge(&snap->wake, &s[i]->wake);
		hist_merge(&snap->tick, &s[i]->tick);
	}
}

void stats_part_sum(struct stats_part *out, struct stats *const *s, int n,
		    bool upstream, int id)
{
	memset(out, 0, sizeof(*out));
	out->id = id;
	for (int i = 0; i < n; i++) {
		const struct stats_part *p = upstream ? s[i]->upstream :
							s[i]->listener;
		int np = upstream ? STATS_MAX_UPSTREAM : STATS_MAX_LISTEN;
		for (int j = 0; j < np; j++) {
			if (__atomic_load_n(&p[j].id, __ATOMIC_ACQUIRE) != id)
				continue;
			for (int k = 0; k < STATS_NCOUNTERS; k++)
				out->counter[k] += LOAD(&p[j].counter[k]);
			for (int k = 0; k < STATS_NDROPS; k++)
				out->drop[k] += LOAD(&p[j].drop[k]);
			out->flows_active += LOAD(&p[j].flows_active);
		}
	}
}

/* Add the counters in cmask of p to o, then the flows of a listener (or
 * not), then the drops in dmask. */
static json_t *json_part(json_t *o, const struct stats_part *p,
			 uint64_t cmask, bool flows, uint64_t dmask)
{
	json_t *drops = json_object();
	for (int i = 0; i < STATS_NCOUNTERS; i++)
		if (cmask >> i & 1)
			json_object_set_new(o, counter_name[i],
				json_integer((json_int_t)p->counter[i]));
	if (flows)
		json_object_set_new(o, "flows_active",
				    json_integer(p->flows_active));
	for (int i = 0; i < STATS_NDROPS; i++)
		if (dmask >> i & 1)
			json_object_set_new(drops, drop_name[i],
				json_integer((json_int_t)p->drop[i]));
	json_object_set_new(o, "drops", drops);
	return o;
}

void stats_json_parts(json_t *listeners, json_t *upstreams,
		      struct stats *const *s, int n,
		      const struct stats_label *l, int nl,
		      const struct stats_label *u, int nu)
{
	struct stats_part sum;
	for (int i = 0; i < nl; i++) {
		stats_part_sum(&sum, s, n, false, l[i].id);
		json_object_set_new(listeners, l[i].text,
				    json_part(json_pack("{s:i}", "id", l[i].id),
					      &sum, STATS_LMASK, true, ~0ULL));
	}
	for (int i = 0; i < nu; i++) {
		stats_part_sum(&sum, s, n, true, u[i].id);
		json_object_set_new(upstreams, u[i].text,
				    json_part(json_object(), &sum, STATS_UMASK,
					      false, STATS_UDMASK));
	}
}

char *stats_json(const struct stats_snapshot *snap,
		 const struct stats_sched *sched, double duration_s,
		 json_t *more)
{
	json_t *counters = json_object(), *drops = json_object(),
	       *errors = json_object(), *late = json_object();
	for (int i = 0; i < STATS_NCOUNTERS; i++)
		json_object_set_new(counters, counter_name[i],
				    json_integer((json_int_t)snap->counter[i]));
	json_object_set_new(counters, "flows_active",
			    json_integer(snap->flows_active));
	for (int i = 0; i < STATS_NDROPS; i++)
		json_object_set_new(drops, drop_name[i],
				    json_integer((json_int_t)snap->drop[i]));
	for (int i = 0; i < STATS_NERRORS; i++)
		json_object_set_new(errors, error_name[i],
				    json_integer((json_int_t)snap->error[i]));
	for (int i = 0; i < STATS_NWAKEUPS; i++)
		json_object_set_new(late, wakeup_name[i], json_integer(
				    (json_int_t)snap->late_wakeups[i]));
	json_t *root = json_pack("{s:s, s:f, s:{s:s, s:i, s:b, s:s}, s:o, s:o, "
				 "s:o, s:o, s:o, s:o, s:o}",
				 "program", "relay",
				 "duration_s", duration_s,
				 "sched", "policy", sched->policy,
				 "priority", sched->priority,
				 "realtime", !sched->why[0],
				 "why", sched->why,
				 "counters", counters,
				 "drops", drops,
				 "errors", errors,
				 "late_wakeups", late,
				 "rx_latency_us",
				 results_percentiles(&snap->rx),
				 "wake_latency_us",
				 results_percentiles(&snap->wake),
				 "tick_lateness_us",
				 results_percentiles(&snap->tick));
	if (!root) {
		json_decref(more);
		return NULL;
	}
	if (more)
		json_object_update(root, more);
	json_decref(more);
	/* 9 digits: a mean of 44.2 prints as 44.2, not 44.200000000000003. */
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
				JSON_REAL_PRECISION(9));
	json_decref(root);
	return text;
}

void stats_derived(char *out, size_t len, const char *path, const char *mid,
		   const char *ext)
{
	const char *slash = strrchr(path, '/');
	const char *dot = strrchr(path, '.');
	size_t base = dot && (!slash || dot > slash) ? (size_t)(dot - path)
						     : strlen(path);
	snprintf(out, len, "%.*s.%s%s", (int)base, path, mid, ext);
}

static int cmp_row(const void *a, const void *b)
{
	int64_t x = ((const struct stats_row *)a)->window;
	int64_t y = ((const struct stats_row *)b)->window;
	return (x > y) - (x < y);
}

/* Several loops' rows of one window: counts add up, the percentiles are
 * the worst loop's. */
static void merge_window(struct results_window *m,
			 const struct results_window *r)
{
#define MAX(a, b) ((a) > (b) ? (a) : (b))
	m->count += r->count;
	m->p50_us = MAX(m->p50_us, r->p50_us);
	m->p99_us = MAX(m->p99_us, r->p99_us);
	m->max_us = MAX(m->max_us, r->max_us);
#undef MAX
}

/* The loops' rows, to be merged by window. */
struct series_arg {
	struct stats *const *s;
	int n;
};

/* Merge the loops' rows by window (merge_window), fill windows without a
 * row with 0. */
static int put_timeseries(FILE *f, const void *arg)
{
	struct stats *const *s = ((const struct series_arg *)arg)->s;
	int n = ((const struct series_arg *)arg)->n;
	uint64_t total = 0;
	for (int i = 0; i < n; i++)
		total += s[i]->nrows < STATS_ROWS ? s[i]->nrows : STATS_ROWS;
	struct stats_row *all = calloc(total ? total : 1, sizeof(*all));
	if (!all)
		return -1;
	uint64_t k = 0;
	for (int i = 0; i < n; i++) {
		uint64_t m = s[i]->nrows < STATS_ROWS ? s[i]->nrows : STATS_ROWS;
		memcpy(all + k, s[i]->rows, m * sizeof(*all));
		k += m;
	}
	qsort(all, total, sizeof(*all), cmp_row);
	char comment[160];
	snprintf(comment, sizeof(comment), "relay: per-%lld ms window; "
		 "count/p50/p99/max are timer tick lateness, rx_* the datagram "
		 "latency (us)", STATS_WINDOW_NS / 1000000);
	results_series_header(f, comment,
			      ",rx_count,rx_p50_us,rx_p99_us,rx_max_us");
	const struct results_window none = { 0 };
	int64_t next = 0;
	for (uint64_t i = 0; i < total;) {
		struct stats_row m = all[i];
		for (i++; i < total && all[i].window == m.window; i++) {
			merge_window(&m.tick, &all[i].tick);
			merge_window(&m.rx, &all[i].rx);
		}
		for (; next < m.window; next++)
			results_series_row(f, next, STATS_WINDOW_NS, &none,
					   &none);
		results_series_row(f, m.window, STATS_WINDOW_NS, &m.tick,
				   &m.rx);
		next = m.window + 1;
	}
	free(all);
	return 0;
}

static int put_text(FILE *f, const void *text)
{
	return fputs(text, f) < 0 || fputc('\n', f) < 0 ? -1 : 0;
}

static int put_hgrm(FILE *f, const void *h)
{
	return results_hgrm(h, f);
}

int stats_write_files(const char *path, const struct stats_snapshot *snap,
		      const struct stats_sched *sched, double duration_s,
		      json_t *more, struct stats *const *s, int n, char *err,
		      size_t errlen)
{
	char file[4200];
	char *text = stats_json(snap, sched, duration_s, more);
	if (!text) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	int rc = newfile_write(path, put_text, text, err, errlen);
	free(text);
	if (rc < 0)
		return -1;
	const struct { const char *name; const struct hist *h; } hs[] = {
		{ "rx_latency", &snap->rx },
		{ "wake_latency", &snap->wake },
		{ "tick_lateness", &snap->tick },
	};
	for (int i = 0; i < 3; i++) {
		stats_derived(file, sizeof(file), path, hs[i].name, ".hgrm");
		if (newfile_write(file, put_hgrm, hs[i].h, err, errlen) < 0)
			return -1;
	}
	stats_derived(file, sizeof(file), path, "timeseries", ".csv");
	const struct series_arg rows = { s, n };
	return newfile_write(file, put_timeseries, &rows, err, errlen);
}
