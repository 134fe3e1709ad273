#include "watch.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sysexits.h>

#include "cgroup.h"
#include "clock.h"
#include "watchdog.h"

static volatile sig_atomic_t stopped;

static void on_stop(int sig)
{
	(void)sig;
	stopped = 1;
}

/* Watch until told to stop or the deadline, but never leave a stall open
 * unless the deadline has come. */
static bool keep_watching(struct watchdog *w, void *arg)
{
	const int64_t *deadline = arg;
	return (!stopped || w->stuck) && clock_ns(CLOCK_MONOTONIC) < *deadline;
}

/* The co-tenant's cgroup must hold the parameters' quota: else the unit
 * that set it and the scenario disagree, and the watchdog would restore
 * another quota than the one the run is about. 0, or -1 after saying why. */
static int same_quota(const struct params *p, const struct cg *cg)
{
	int64_t quota, period, want = cg_quota_us(p->cpu_quota_pct, p->period_us);
	if (cg_get_quota(cg, &quota, &period) < 0) {
		fprintf(stderr, "demo-scenario: cannot read the quota of %s\n", cg->path);
		return -1;
	}
	if (quota == want && period == p->period_us)
		return 0;
	fprintf(stderr, "demo-scenario: %s has a quota of %lld us every %lld us, the "
		"parameters %lld of %d (cpu_quota_pct %d, period_us %d)\n", cg->path,
		(long long)quota, (long long)period, (long long)want, p->period_us,
		p->cpu_quota_pct, p->period_us);
	return -1;
}

static int write_scenario(const struct params *p, const struct watchdog *w,
			  const struct cg *cg, const struct cg_stat *st, json_t *problems,
			  int64_t t0_ns)
{
	struct utsname u;
	uname(&u);
	char path[4200];
	json_t *cgj = json_pack("{s:i, s:s, s:I, s:I, s:I, s:I}", "version", cg->version,
		"path", p->cgroup, "quota_us", (json_int_t)cg_quota_us(p->cpu_quota_pct, p->period_us),
		"nr_periods", (json_int_t)st->nr_periods, "nr_throttled", (json_int_t)st->nr_throttled,
		"throttled_us", (json_int_t)st->throttled_us);
	json_t *doc = json_pack("{s:s, s:o, s:s, s:s, s:s, s:f, s:s, s:I, s:s, s:o, "
				"s:{s:I, s:f}, s:o, s:O}",
		"mode", "watch", "params", params_json(p), "kernel", u.release,
		"kernel_version", u.version, "machine", u.machine,
		"elapsed_s", (double)(clock_ns(CLOCK_MONOTONIC) - t0_ns) / 1e9,
		"time_base", "seconds since the relay started (its heartbeat's start)",
		"t0_mono_ns", (json_int_t)w->t0_ns, "heartbeat", p->heartbeat,
		"stalls", wd_stalls_json(w),
		"watchdog", "polls", (json_int_t)w->polls, "max_poll_late_ms", w->max_poll_gap_ms,
		"cgroup", cgj, "problems", problems);
	snprintf(path, sizeof(path), "%s/scenario.json", p->out);
	int rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_REAL_PRECISION(7));
	json_decref(doc);
	if (rc < 0)
		fprintf(stderr, "demo-scenario: cannot write %s\n", path);
	return rc;
}

int watch_run(const struct params *p)
{
	char err[512], file[4200];
	if (mkdir(p->out, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "demo-scenario: cannot create %s: %s\n", p->out, strerror(errno));
		return EX_CANTCREAT;
	}
	snprintf(file, sizeof(file), "%s/events.csv", p->out);
	FILE *events = fopen(file, "w");
	if (!events) {
		fprintf(stderr, "demo-scenario: cannot write %s: %s\n", file, strerror(errno));
		return EX_SOFTWARE;
	}
	static struct cg cg;
	static struct watchdog w;	/* large: the stall records */
	int status = 0;
	if (cg_open(&cg, p->cgroup, "watch", false, err, sizeof(err)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", err);
		status = EX_OSERR;
		goto out;
	}
	if (same_quota(p, &cg) < 0) {
		status = EX_CONFIG;
		goto out;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	struct wd_config cfg = { .poll_ms = p->poll_ms, .stall_ms = p->stall_ms,
		.lift_ms = p->lift_ms, .poll_cpu = p->watchdog_cpu, .writer_cpu = p->cpu,
		.prio = p->watchdog_prio, .quota_us = cg_quota_us(p->cpu_quota_pct, p->period_us),
		.period_us = p->period_us };
	/*
	 * The watch must run while the stall holds: a page fault then, on a
	 * page of this program not yet read, waits for I/O whose completion
	 * can sit behind the stalled CPU's softirq lock (a test host running
	 * it from a 9p share stayed stuck for good). So everything it maps is
	 * in memory before it watches.
	 */
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		fprintf(stderr, "demo-scenario: mlockall: %s: a page fault in a stall can hold "
			"the watch up\n", strerror(errno));
	int64_t t0_ns = clock_ns(CLOCK_MONOTONIC);
	int64_t deadline = t0_ns + (int64_t)(p->duration_s + p->grace_s) * 1000000000;
	if (wd_init(&w, &cfg, &cg, events, err, sizeof(err)) < 0 ||
	    wd_apply_quota(&w, err, sizeof(err)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", err);
		wd_close(&w);
		status = EX_OSERR;
		goto out;
	}
	fprintf(stderr, "demo-scenario: watching %s; %s keeps %lld us every %d us, written "
		"again from CPU %d\n", p->heartbeat, p->cgroup, (long long)cfg.quota_us,
		p->period_us, p->cpu);
	struct cg_stat st0 = { 0 }, st1 = { 0 }, st = { 0 };
	json_t *problems = json_array();
	cg_read_stat(&cg, &st0);
	w.armed = true;
	if (wd_run(&w, p->heartbeat, keep_watching, &deadline, err, sizeof(err)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", err);
		status = strstr(err, "watchdog:") == err ? EX_OSERR : EX_UNAVAILABLE;
	}
	if (cg_read_stat(&cg, &st1) == 0)
		st = cg_stat_delta(&st0, &st1);
	wd_close(&w);
	if (w.problem[0])
		json_array_append_new(problems, json_sprintf("watchdog: %s", w.problem));
	if (!stopped && !status)
		json_array_append_new(problems, json_sprintf("not stopped within duration_s + "
							     "grace_s (%d s)", p->duration_s + p->grace_s));
	fprintf(stderr, "demo-scenario: watched %.1f s: %d stalls\n",
		(double)(clock_ns(CLOCK_MONOTONIC) - t0_ns) / 1e9, w.nstalls);
	if (!status) {
		if (write_scenario(p, &w, &cg, &st, problems, t0_ns) < 0)
			status = EX_SOFTWARE;
		else if (json_array_size(problems))
			status = 1;
	}
	json_decref(problems);
out:
	cg_close(&cg);
	fclose(events);
	return status;
}
