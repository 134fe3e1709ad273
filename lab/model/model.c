/*
 * model: the threads of one run and the hand-shake that starts them all
 * at once, after each has pinned itself, joined its cgroup or become RT.
 */
#include "model.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "clock.h"
#include "rt.h"

#define NS_PER_US 1000LL
#define NS_PER_S 1000000000LL

struct run {
	const struct model_params *p;
	struct model_result *r;
	struct cg *cg;
	struct rlock lock;

	/* The "ready list": producers add under the lock (shared, hence an
	 * atomic, like the kernel's lockless append under the read lock); the
	 * consumer takes everything under the lock exclusive. */
	atomic_uint_fast64_t ready;
	atomic_bool stop;

	/* Start hand-shake: every thread reports in, then waits for go. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int arrived;
	bool go;
	int64_t start_ns, end_ns;

	/* The first failure of any thread. */
	int status;
	char err[512];
};

/* Burn CPU for ns: the producers' work must count against their quota. */
static void spin_for(int64_t ns)
{
	int64_t until = clock_ns(CLOCK_MONOTONIC) + ns;
	while (clock_ns(CLOCK_MONOTONIC) < until)
		;
}

static void run_fail(struct run *run, int status, const char *fmt, ...)
{
	pthread_mutex_lock(&run->mu);
	if (!run->status) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(run->err, sizeof(run->err), fmt, ap);
		va_end(ap);
		run->status = status;
	}
	pthread_mutex_unlock(&run->mu);
	atomic_store(&run->stop, true);
}

/* Report in and wait for the start. Returns false when the run is off. */
static bool run_arrive(struct run *run)
{
	pthread_mutex_lock(&run->mu);
	run->arrived++;
	pthread_cond_broadcast(&run->cv);
	while (!run->go)
		pthread_cond_wait(&run->cv, &run->mu);
	pthread_mutex_unlock(&run->mu);
	return !atomic_load(&run->stop);
}

/* Move the calling thread into the cgroup. struct cg records every move,
 * so the producers go one at a time. */
static int join_cgroup(struct run *run, char *why, size_t len)
{
	pthread_mutex_lock(&run->mu);
	int rc = cg_add_thread(run->cg, 0, why, len);
	pthread_mutex_unlock(&run->mu);
	return rc;
}

static void *producer(void *arg)
{
	struct run *run = arg;
	const struct model_params *p = run->p;
	char why[400];

	if (rt_pin(p->cpu, why, sizeof(why)) != 0)
		run_fail(run, EX_OSERR, "cannot pin a producer to CPU %d: %s",
			 p->cpu, why);
	else if (join_cgroup(run, why, sizeof(why)) != 0)
		run_fail(run, EX_OSERR,
			 "cannot move a producer into the cgroup: %s", why);
	if (!run_arrive(run))
		return NULL;

	int64_t hold_ns = (int64_t)p->hold_us * NS_PER_US,
		gap_ns = (int64_t)p->gap_us * NS_PER_US;
	while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		int e = rlock_lock_shared(&run->lock);
		if (e) {
			run_fail(run, EX_SOFTWARE, "producer: taking the %s: %s",
				 rlock_name(run->lock.kind), strerror(e));
			break;
		}
		atomic_fetch_add_explicit(&run->ready, 1, memory_order_relaxed);
		spin_for(hold_ns);
		rlock_unlock(&run->lock);
		spin_for(gap_ns);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct run *run = arg;
	const struct model_params *p = run->p;
	struct model_result *r = run->r;
	char why[400];

	if (rt_pin(p->cpu, why, sizeof(why)) != 0)
		run_fail(run, EX_OSERR, "cannot pin the consumer to CPU %d: %s",
			 p->cpu, why);
	else if (rt_set_fifo(p->consumer_prio, why, sizeof(why)) != 0)
		run_fail(run, EX_OSERR, "the consumer cannot run SCHED_FIFO: %s",
			 why);
	else
		rt_prefault_stack(64 * 1024);
	/* No rt_lock_memory: a page fault costs microseconds against the tens
	 * of milliseconds measured, and under ASan mlockall would pin the
	 * whole shadow memory. */
	if (!run_arrive(run))
		return NULL;

	int64_t tick_ns = (int64_t)p->tick_us * NS_PER_US;
	int64_t next = run->start_ns + tick_ns;
	while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		struct timespec ts = clock_ns_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL)
		       == EINTR)
			;
		int64_t t0 = clock_ns(CLOCK_MONOTONIC);
		if (t0 >= run->end_ns)
			break;
		int e = rlock_lock_excl(&run->lock);
		int64_t t1 = clock_ns(CLOCK_MONOTONIC);
		if (e) {
			run_fail(run, EX_SOFTWARE, "consumer: taking the %s: %s",
				 rlock_name(run->lock.kind), strerror(e));
			break;
		}
		r->sections += atomic_exchange_explicit(&run->ready, 0,
							memory_order_relaxed);
		rlock_unlock(&run->lock);

		int64_t wait_us = (t1 - t0 + NS_PER_US / 2) / NS_PER_US;
		hist_record(&r->waits, wait_us);
		mseries_record(&r->series, t0 - run->start_ns, wait_us);
		/* A ticker: the ticks missed while waiting are gone. */
		do
			next += tick_ns;
		while (next <= t1);
	}
	return NULL;
}

/* Sleep until the run's end or one of sigs. Returns the signal, or 0. */
static int wait_end(const struct run *run, const sigset_t *sigs)
{
	for (;;) {
		int64_t left = run->end_ns - clock_ns(CLOCK_MONOTONIC);
		if (left <= 0)
			return 0;
		struct timespec ts = clock_ns_ts(left);
		int sig = sigtimedwait(sigs, NULL, &ts);
		if (sig > 0)
			return sig;
		if (errno == EAGAIN)
			return 0;
	}
}

void model_defaults(struct model_params *p)
{
	*p = (struct model_params){
#define MODEL_PARAM_DEFAULT(name, min, max, def, arg, spec, help) .name = def,
		MODEL_PARAMS(MODEL_PARAM_DEFAULT)
#undef MODEL_PARAM_DEFAULT
	};
}

int model_run(const struct model_params *p, enum rlock_kind kind,
	      struct cg *cg, const sigset_t *sigs, struct model_result *r,
	      char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	if (hist_init_us(&r->waits) != 0 ||
	    mseries_init(&r->series, p->window_us, p->duration_s * NS_PER_S,
			 MODEL_STALL_US) != 0) {
		snprintf(err, errlen, "no memory for the histograms");
		return EX_SOFTWARE;
	}

	struct run run = { .p = p, .r = r, .cg = cg };
	int e = rlock_init(&run.lock, kind);
	if (e) {
		snprintf(err, errlen, "cannot create the %s: %s",
			 rlock_name(kind), strerror(e));
		return EX_SOFTWARE;
	}
	pthread_mutex_init(&run.mu, NULL);
	pthread_cond_init(&run.cv, NULL);

	pthread_t threads[1 + p->producers];
	int created = 0;
	for (int i = 0; i < 1 + p->producers; i++) {
		e = pthread_create(&threads[i], NULL, i ? producer : consumer,
				   &run);
		if (e) {
			run_fail(&run, EX_OSERR, "cannot start a thread: %s",
				 strerror(e));
			break;
		}
		created++;
	}

	/* Every thread is set up (or has failed) before the clock starts. */
	struct cg_stat before;
	pthread_mutex_lock(&run.mu);
	while (run.arrived < created)
		pthread_cond_wait(&run.cv, &run.mu);
	r->cg_stat_ok = cg_read_stat(cg, &before) == 0;
	run.start_ns = clock_ns(CLOCK_MONOTONIC);
	run.end_ns = run.start_ns + p->duration_s * NS_PER_S;
	run.go = true;
	pthread_cond_broadcast(&run.cv);
	pthread_mutex_unlock(&run.mu);

	if (!atomic_load(&run.stop))
		r->signo = wait_end(&run, sigs);
	int64_t end = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&run.stop, true);
	for (int i = 0; i < created; i++)
		pthread_join(threads[i], NULL);

	struct cg_stat after;
	if (r->cg_stat_ok && cg_read_stat(cg, &after) == 0)
		r->cg = cg_stat_delta(&before, &after);
	else
		r->cg_stat_ok = false;
	r->sections += atomic_load(&run.ready);
	r->elapsed_ns = (end < run.end_ns ? end : run.end_ns) - run.start_ns;
	mseries_finish(&r->series, r->elapsed_ns);

	rlock_destroy(&run.lock);
	pthread_cond_destroy(&run.cv);
	pthread_mutex_destroy(&run.mu);
	if (run.status)
		snprintf(err, errlen, "%s", run.err);
	return run.status;
}

void model_result_free(struct model_result *r)
{
	hist_free(&r->waits);
	mseries_free(&r->series);
}
