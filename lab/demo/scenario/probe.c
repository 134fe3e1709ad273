#include "probe.h"

#include <errno.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "rt.h"

struct start {
	struct probe *p;
	sem_t ready;
	int rc;
};

static void *probe_main(void *arg)
{
	struct start *s = arg;
	struct probe *p = s->p;
	char why[200];
	if (rt_pin(p->cpu, why, sizeof(why)) < 0 || rt_set_fifo(p->prio, why, sizeof(why)) < 0) {
		snprintf(p->err, sizeof(p->err), "freeze probe: %s", why);
		s->rc = -1;
		sem_post(&s->ready);
		return NULL;
	}
	s->rc = 0;
	sem_post(&s->ready);
	int64_t next = p->origin_ns, period = (int64_t)p->period_us * 1000;
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		next += period;
		/* missed wake-ups: the next one on the grid */
		next = clock_next_slot(next, clock_ns(CLOCK_MONOTONIC), period);
		struct timespec ts = clock_ns_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		int64_t late = clock_ns(CLOCK_MONOTONIC) - next;
		int64_t rt_now = clock_ns(CLOCK_REALTIME);
		p->wakes++;
		if (late > p->max_late_ns)
			p->max_late_ns = late;
		if (late < p->min_late_ns)
			continue;
		p->total_ns += late;
		if (p->nev < p->cap)
			p->ev[p->nev++] = (struct freeze){ rt_now - late, rt_now };
		else
			p->lost++;
	}
	return NULL;
}

int probe_start(struct probe *p, int cpu, int prio, int period_us, int64_t origin_ns,
		int64_t min_late_ns, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->origin_ns = origin_ns;
	p->cpu = cpu;
	p->prio = prio;
	p->period_us = period_us;
	p->min_late_ns = min_late_ns;
	p->cap = 4096;
	p->ev = calloc((size_t)p->cap, sizeof(*p->ev));
	if (!p->ev) {
		snprintf(err, errlen, "freeze probe: out of memory");
		return -1;
	}
	struct start s = { .p = p };
	sem_init(&s.ready, 0, 0);
	int rc = pthread_create(&p->thread, NULL, probe_main, &s);
	if (rc != 0) {
		snprintf(err, errlen, "freeze probe: cannot start its thread: %s", strerror(rc));
		return -1;
	}
	while (sem_wait(&s.ready) < 0 && errno == EINTR)
		;
	if (s.rc < 0) {
		pthread_join(p->thread, NULL);
		snprintf(err, errlen, "%s", p->err);
		return -1;
	}
	p->started = true;
	return 0;
}

void probe_stop(struct probe *p)
{
	if (!p->started)
		return;
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	pthread_join(p->thread, NULL);
	p->started = false;
}

void probe_free(struct probe *p)
{
	free(p->ev);
	p->ev = NULL;
	p->nev = 0;
}

int64_t probe_frozen_ns(const struct probe *const *p, int n, int64_t from, int64_t to)
{
	/* Walk [from, to] in the order of the intervals' starts: small inputs
	 * (a handful of freezes per run), so a selection each step will do. */
	int64_t covered = 0, at = from;
	while (at < to) {
		const struct freeze *best = NULL;
		for (int i = 0; i < n; i++)
			for (int j = 0; j < p[i]->nev; j++) {
				const struct freeze *f = &p[i]->ev[j];
				if (f->to_ns <= at || f->from_ns >= to)
					continue;
				if (!best || f->from_ns < best->from_ns)
					best = f;
			}
		if (!best)
			return covered;
		int64_t a = best->from_ns > at ? best->from_ns : at;
		int64_t b = best->to_ns < to ? best->to_ns : to;
		covered += b - a;
		at = b;
	}
	return covered;
}
