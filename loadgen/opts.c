/* opts: getopt_long over loadgen's flags, with checked number parsing. */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "opt.h"
#include "rt.h"
#include "search.h"
#include "why.h"
#include "wire.h"

/* Above this a single thread cannot pace: one wake-up per 64-packet
 * sendmmsg every 32 us at best on loopback. */
#define MAX_PPS_PER_THREAD 2000000.0
#define MAX_RATE	(MAX_PPS_PER_THREAD * OPTS_MAX_THREADS)
/* The schedule counts in milli-packets per second (sched.c): a slower rate
 * would round to zero and divide by it. */
#define MIN_RATE	0.001
/* A quota of a thousand CPUs; more would overflow the microseconds per
 * period the kernel is given, and no host here has as many. A whole
 * number: --cpu-quota's refusal spells it out. */
#define MAX_QUOTA_PCT	100000
/* The reply bitmap holds a bit per packet: 1e11 packets is 12.5 GB. */
#define MAX_PACKETS	1e11
/* Timeouts, windows and pauses end up in poll(2)'s int milliseconds. */
#define MAX_MS		86400000

/* A finite number followed by an optional suffix from the list. */
static int number(const char *s, double *v, const char **suffix)
{
	char *end;
	errno = 0;
	*v = strtod(s, &end);
	if (end == s || errno || !isfinite(*v) || *v < 0)
		return -1;
	*suffix = end;
	return 0;
}

int opts_parse_rate(const char *s, double *rate)
{
	const char *suf;
	if (number(s, rate, &suf) < 0)
		return -1;
	if (strcmp(suf, "k") == 0 || strcmp(suf, "K") == 0)
		*rate *= 1e3;
	else if (strcmp(suf, "M") == 0 || strcmp(suf, "m") == 0)
		*rate *= 1e6;
	else if (*suf)
		return -1;
	/* 1e308k is finite until the suffix scales it */
	return *rate > 0 && isfinite(*rate) ? 0 : -1;
}

int opts_parse_time_us(const char *s, int64_t *us)
{
	const char *suf;
	double v;
	if (number(s, &v, &suf) < 0)
		return -1;
	double mult;
	if (!*suf || strcmp(suf, "s") == 0)
		mult = 1e6;
	else if (strcmp(suf, "ms") == 0)
		mult = 1e3;
	else if (strcmp(suf, "us") == 0)
		mult = 1;
	else if (strcmp(suf, "m") == 0)
		mult = 60e6;
	else
		return -1;
	if (v * mult > 1e15)
		return -1;
	*us = llround(v * mult);
	return 0;
}

/* Latency values default to microseconds, unlike durations. */
static int latency_us(const char *s, int64_t *us)
{
	const char *suf;
	double v;
	if (number(s, &v, &suf) < 0)
		return -1;
	if (!*suf)
		suf = "us";
	char buf[32];
	snprintf(buf, sizeof(buf), "%.17g%s", v, suf);
	return opts_parse_time_us(buf, us);
}

/* A time in milliseconds: a bare number, or one with a unit. */
static int millis(const char *s, int64_t *ms)
{
	const char *suf;
	double v;
	int64_t us;
	if (number(s, &v, &suf) < 0)
		return -1;
	if (!*suf) {
		if (v > MAX_MS)
			return -1;
		*ms = llround(v);
		return 0;
	}
	if (opts_parse_time_us(s, &us) < 0 || us / 1000 > MAX_MS)
		return -1;
	*ms = us / 1000;
	return 0;
}

static const struct { const char *in, *name; double pct; } slo_names[] = {
	{ "p50", "p50", 50 }, { "p90", "p90", 90 }, { "p99", "p99", 99 },
	{ "p99.9", "p99_9", 99.9 }, { "p99_9", "p99_9", 99.9 },
	{ "p99.99", "p99_99", 99.99 }, { "p99_99", "p99_99", 99.99 },
	{ "max", "max", 100 },
};

int opts_parse_slo(const char *s, struct opts_slo *slo, int max)
{
	int n = 0;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || n == max)
			return -1;
		*eq = 0;
		size_t i;
		for (i = 0; i < sizeof(slo_names) / sizeof(slo_names[0]); i++)
			if (strcmp(tok, slo_names[i].in) == 0)
				break;
		if (i == sizeof(slo_names) / sizeof(slo_names[0]) ||
		    latency_us(eq + 1, &slo[n].us) < 0)
			return -1;
		snprintf(slo[n].name, sizeof(slo[n].name), "%s",
			 slo_names[i].name);
		slo[n].pct = slo_names[i].pct;
		n++;
	}
	return n ? n : -1;
}

static int percent(const char *s, double *v)
{
	const char *suf;
	if (number(s, v, &suf) < 0 || (*suf && strcmp(suf, "%") != 0))
		return -1;
	return *v > 0 ? 0 : -1;
}

/*
 * A flag's kind is the function that sets its value; what it needs past
 * lib/opt's row is in its struct flag: the flag as given, the field (at
 * off, size bytes), the range lo..hi in the kind's unit and, for the
 * kinds whose refusal is a phrase of the flag's own, the phrase (what).
 */
struct flag;
typedef int flag_set(struct opts *o, const struct flag *f, const char *v,
		     char *err, size_t errlen);
struct flag {
	flag_set *set;
	const char *flag;
	size_t off, size;
	double lo, hi;
	const char *what;
};

static void *field(struct opts *o, const struct flag *f)
{
	return (char *)o + f->off;
}

/* The refusal of the kinds that say the flag's phrase: -1. */
static int not_what(const struct flag *f, const char *v, char *err,
		    size_t errlen)
{
	return why_set(err, errlen, "%s '%s' is not %s", f->flag, v, f->what);
}

/* A whole number lo..hi into an int. */
static int set_int(struct opts *o, const struct flag *f, const char *v,
		   char *err, size_t errlen)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (end == v || *end || errno || x < f->lo || x > f->hi)
		return why_set(err, errlen, "%s '%s' is not a number from %.0f "
			       "to %.0f", f->flag, v, f->lo, f->hi);
	*(int *)field(o, f) = (int)x;
	return 0;
}

/* Milliseconds lo..hi (a bare number, or one with a unit) into an
 * int64_t. */
static int set_ms(struct opts *o, const struct flag *f, const char *v,
		  char *err, size_t errlen)
{
	int64_t ms;
	if (millis(v, &ms) < 0 || ms < f->lo || ms > f->hi)
		return why_set(err, errlen, "%s '%s' is not a time in ms from "
			       "%.0f to %.0f (or with a unit: 2s, 500ms)",
			       f->flag, v, f->lo, f->hi);
	*(int64_t *)field(o, f) = ms;
	return 0;
}

/* The text itself, into a const char *. */
static int set_text(struct opts *o, const struct flag *f, const char *v,
		    char *err, size_t errlen)
{
	(void)err, (void)errlen;
	*(const char **)field(o, f) = v;
	return 0;
}

/* A rate (20000, 20k, 1.5M) lo..hi into a double. */
static int set_rate(struct opts *o, const struct flag *f, const char *v,
		    char *err, size_t errlen)
{
	double x;
	if (opts_parse_rate(v, &x) < 0)
		return not_what(f, v, err, errlen);
	if (x < f->lo || x > f->hi)
		return why_set(err, errlen, "%s '%s' is outside %g to %.0f "
			       "packets per second (%.0f pps per thread, %d "
			       "threads)", f->flag, v, f->lo, f->hi,
			       MAX_PPS_PER_THREAD, OPTS_MAX_THREADS);
	*(double *)field(o, f) = x;
	return 0;
}

/* A number lo..hi, as parse reads it, into a double. */
static int set_double_by(int (*parse)(const char *, double *),
			 struct opts *o, const struct flag *f, const char *v,
			 char *err, size_t errlen)
{
	double x;
	if (parse(v, &x) < 0 || x < f->lo || x > f->hi)
		return not_what(f, v, err, errlen);
	*(double *)field(o, f) = x;
	return 0;
}

static int rate_or_percent(const char *s, double *v)
{
	return opts_parse_rate(s, v) == 0 || percent(s, v) == 0 ? 0 : -1;
}

/* The same, a percentage above 0 (20, 20%); a rate or a percentage (a
 * sweep's ends). */
static int set_pct(struct opts *o, const struct flag *f, const char *v,
		   char *err, size_t errlen)
{
	return set_double_by(percent, o, f, v, err, errlen);
}

static int set_rate_pct(struct opts *o, const struct flag *f, const char *v,
			char *err, size_t errlen)
{
	return set_double_by(rate_or_percent, o, f, v, err, errlen);
}

/* A time of at least lo us (a bare number: seconds) into a double of
 * seconds. */
static int set_seconds(struct opts *o, const struct flag *f, const char *v,
		       char *err, size_t errlen)
{
	int64_t us;
	if (opts_parse_time_us(v, &us) < 0 || us < f->lo)
		return not_what(f, v, err, errlen);
	*(double *)field(o, f) = (double)us / 1e6;
	return 0;
}

/* A time lo..hi us, as parse reads it, into an int64_t of microseconds. */
static int set_time_by(int (*parse)(const char *, int64_t *), struct opts *o,
		       const struct flag *f, const char *v, char *err,
		       size_t errlen)
{
	int64_t us;
	if (parse(v, &us) < 0 || us < f->lo || us > f->hi)
		return not_what(f, v, err, errlen);
	*(int64_t *)field(o, f) = us;
	return 0;
}

/* The same, a bare number microseconds; a bare number seconds. */
static int set_us(struct opts *o, const struct flag *f, const char *v,
		  char *err, size_t errlen)
{
	return set_time_by(latency_us, o, f, v, err, errlen);
}

static int set_time(struct opts *o, const struct flag *f, const char *v,
		    char *err, size_t errlen)
{
	return set_time_by(opts_parse_time_us, o, f, v, err, errlen);
}

/* One of the two words of what ("process or threads"): the second sets
 * the bool, the first clears it. */
static int set_either(struct opts *o, const struct flag *f, const char *v,
		      char *err, size_t errlen)
{
	const char *or = strstr(f->what, " or ");
	size_t n = (size_t)(or - f->what);
	bool second = strcmp(v, or + 4) == 0;
	if (!second && (strlen(v) != n || strncmp(v, f->what, n) != 0))
		return why_set(err, errlen, "%s '%s': say %s", f->flag, v,
			       f->what);
	*(bool *)field(o, f) = second;
	return 0;
}

/* A flag without a value: lo into its bool, int or enum. */
_Static_assert(sizeof(enum opts_mode) == sizeof(int) &&
	       sizeof(enum opts_sweep) == sizeof(int),
	       "set_set writes an enum as an int");
static int set_set(struct opts *o, const struct flag *f, const char *v,
		   char *err, size_t errlen)
{
	(void)v, (void)err, (void)errlen;
	if (f->size == sizeof(bool))
		*(bool *)field(o, f) = f->lo != 0;
	else
		*(int *)field(o, f) = (int)f->lo;
	return 0;
}

/* An address of one of the kinds in the mask hi; what says which. */
#define KIND(k) (1 << ADDR_##k)
static int set_addr(struct opts *o, const struct flag *f, const char *v,
		    char *err, size_t errlen)
{
	char why[256];
	struct addr a;
	if (addr_parse(&a, v, o->addr_flags, why, sizeof(why)) < 0)
		return why_set(err, errlen, "%s: %s", f->flag, why);
	if (!((unsigned)f->hi & (1u << a.kind)))
		return why_set(err, errlen, "%s '%s': %s", f->flag, v, f->what);
	*(struct addr *)field(o, f) = a;
	return 0;
}

/* The same, and the text as given, for what loadgen prints. */
static int set_target(struct opts *o, const struct flag *f, const char *v,
		      char *err, size_t errlen)
{
	if (set_addr(o, f, v, err, errlen) < 0)
		return -1;
	snprintf(o->target_text, sizeof(o->target_text), "%s", v);
	return 0;
}

static int set_cpus(struct opts *o, const struct flag *f, const char *v,
		    char *err, size_t errlen)
{
	char why[256];
	int n = rt_parse_cpus(v, o->cpus, OPTS_MAX_CPUS, why, sizeof(why));
	if (n < 0)
		return why_set(err, errlen, "%s: %s", f->flag, why);
	o->ncpus = n;
	return 0;
}

/* Objectives, added to those of an --slo before (--slo p99.9=1ms --slo
 * p99=500us), none twice. */
static int set_slo(struct opts *o, const struct flag *f, const char *v,
		   char *err, size_t errlen)
{
	int n = opts_parse_slo(v, o->slo + o->nslo, OPTS_MAX_SLO - o->nslo);
	if (n < 0)
		return why_set(err, errlen, "%s '%s' is not a list of "
			       "PERCENTILE=LATENCY (p99=1ms,max=20ms; "
			       "percentiles p50 p90 p99 p99.9 p99.99 max; "
			       "at most %d in all)", f->flag, v, OPTS_MAX_SLO);
	for (int i = o->nslo; i < o->nslo + n; i++)
		for (int k = 0; k < i; k++)
			if (strcmp(o->slo[i].name, o->slo[k].name) == 0)
				return why_set(err, errlen, "%s '%s': %s is "
					       "given twice", f->flag, v,
					       o->slo[i].name);
	o->nslo += n;
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/*
 * Every flag, once: X(ID, NAME, ARG, KIND, FIELD, LO, HI, DEFAULT, WHAT,
 * HELP), made into lib/opt's descriptors (opts_table) and the flags' kinds
 * (flags).
 *   ARG      the value's name in --help and loadgen(1); NULL: no value
 *   KIND     set_KIND above sets FIELD from the value: int, ms, text,
 *            rate, pct, rate_pct, seconds, us, time, either, set, addr,
 *            target, cpus, slo
 *   LO, HI   its range in the kind's unit (set: LO is the value; addr
 *            and target: HI the mask of the address kinds taken)
 *   DEFAULT  the value opts_defaults applies, as it is given on the command
 *            line; NULL: none (the flag is off, or its field's zero
 *            means "not given")
 *   WHAT     the refusal's phrase, for the kinds that say one
 *   HELP     --help's text, '\n' between its lines
 * test_loadgen_flags checks the rows against loadgen(1).
 */
#define LOADGEN_FLAGS(X) \
X(TARGET, "target", "URL", target, target, 0, \
  KIND(UDP) | KIND(TCP) | KIND(UNIX), NULL, "say udp://, tcp:// or unix://", \
  "where to send (udp://1.2.3.4:5, udp://[::1]:5,\nunix:///PATH or " \
  "unix://@NAME: AF_UNIX datagrams, or\ntcp://...: fixed-size messages on " \
  "connections);\nthe target must echo what it gets back") \
X(RATE, "rate", "PPS", rate, rate, MIN_RATE, MAX_RATE, NULL, \
  "a rate (packets per second: 20000, 20k, 1.5M)", "packets per second, " \
  "all threads (20000, 20k, 1.5M;\n0.001 to 512M)") \
X(DURATION, "duration", "SECONDS", seconds, duration_s, 1000, INFINITY, \
  "10", "a duration of at least 1 ms (30, 30s, 500ms)", \
  "how long to send (30, 30s, 500ms, 2m)") \
X(THREADS, "threads", "N", int, threads, 1, OPTS_MAX_THREADS, "1", NULL, \
  "sender threads, one event loop each, 1 to 256") \
X(FLOWS, "flows", "N", int, flows, 1, 4096, NULL, NULL, "UDP sockets or " \
  "TCP connections, spread over the\nthreads; one per thread if not given") \
X(SIZE, "size", "BYTES", int, size, WIRE_HDR_LEN, WIRE_MAX_LEN, "64", NULL, \
  "datagram payload, 40 to 65507") \
X(CPUS, "cpus", "LIST", cpus, cpus, 0, 0, NULL, NULL, "pin the threads to " \
  "these CPUs (0, 0-3, 0,2)") \
X(QUOTA, "cpu-quota", "PERCENT", pct, quota_pct, 0, MAX_QUOTA_PCT, NULL, \
  "a percentage of one CPU above 0 and at most " STR(MAX_QUOTA_PCT) \
  "% (20%, 150%)", "run under a CPU bandwidth quota (20% of one CPU;\n" \
  "200% = two CPUs) in a cgroup made for the run") \
X(PERIOD_US, "quota-period-us", "N", us, period_us, 1000, 1000000, \
  "100000", "a period from 1000 us to 1 s", \
  "the quota's period in us, 1000 to 1000000") \
X(PERIOD, "quota-period", "TIME", time, period_us, 1000, 1000000, NULL, \
  "a period from 1000 us to 1 s", "the same as a time (100ms)") \
X(CGROUP, "cgroup", "PATH|SLICE", text, cgroup, 0, 0, NULL, NULL, "use " \
  "this existing cgroup (or a new child of this\nsystemd slice) instead " \
  "of making one") \
X(SCOPE, "quota-scope", "SCOPE", either, quota_threads, 0, 0, "process", \
  "process or threads", "process or threads: only the sender threads\n" \
  "go under the quota") \
X(TIMEOUT, "timeout", "MS", ms, timeout_ms, 1, MAX_MS, "2000", NULL, \
  "a reply later than this is late; after the last\nsend, wait this long " \
  "for replies") \
X(NO_PROBE, "no-probe", NULL, set, probe, false, 0, NULL, NULL, "do not " \
  "check the target answers before the run") \
X(TIMER, "timer", "MODE", either, epoll_timer, 0, 0, "timerfd", \
  "timerfd or epoll", "timerfd (microsecond pacing) or epoll (1 ms\n" \
  "epoll_wait timeouts; no timerfd in loadgen's own\nepoll set, see " \
  "loadgen(1) on RT kernels)") \
X(SPIN, "spin-us", "N", int, spin_us, 0, OPTS_MAX_SPIN_US, "0", NULL, \
  "wake N us before each send and busy-wait the rest\nof the way: a more " \
  "precise schedule for CPU time\n(0: off, at most 10000; see loadgen(1) " \
  "before using\nit with --cpu-quota)") \
X(RT_PRIO, "rt-priority", "N", int, rt_prio, 1, 98, NULL, NULL, "run the " \
  "sender threads SCHED_FIFO at N (1-98): RT\nclients of the target") \
X(LIST_OVER, "list-over-us", "N", int, list_over_us, 0, OPTS_MAX_LIST_US, \
  "0", NULL, "list each datagram slower than N us in the JSON,\n" \
  "its intended send and its reply on\nCLOCK_MONOTONIC, for a kernel trace " \
  "to explain\n(0: none; at most 10000 a run)") \
X(WATCH_CG, "watch-cgroup", "PATH", text, watch_cgroup, 0, 0, NULL, NULL, \
  "also report the CPU throttling this other cgroup\n(a co-tenant's) got " \
  "during the run") \
X(JSON, "json", "FILE", text, json, 0, 0, NULL, NULL, "write every counter " \
  "and percentile as JSON") \
X(HGRM, "hgrm", "FILE", text, hgrm, 0, 0, NULL, NULL, "write the corrected " \
  "latency distribution\n(HdrHistogram percentile format, ms) and\n" \
  "FILE.uncorrected.hgrm") \
X(HLOG, "hlog", "FILE", text, hlog, 0, 0, NULL, NULL, "write both " \
  "histograms as an HdrHistogram interval\nlog (corrected untagged, " \
  "Tag=uncorrected): the\ninput of loadgen merge and HdrHistogram's tools") \
X(TIMESERIES, "timeseries", "FILE", text, timeseries, 0, 0, NULL, NULL, \
  "write count, p50, p99, max per window as CSV") \
X(WINDOW, "window", "MS", ms, window_ms, 1, MAX_MS, "100", NULL, \
  "the time series window") \
X(NO_PROGRESS, "no-progress", NULL, set, progress, 0, 0, NULL, NULL, "no " \
  "live progress line (shown only on a terminal)") \
X(FROM, "from", "R1|Q1%", rate_pct, from, 0, INFINITY, NULL, \
  "a rate or a quota percentage", "sweep: the first step's rate, or quota " \
  "with --quota;\nwith --search the rate it starts from") \
X(TO, "to", "R2|Q2%", rate_pct, to, 0, INFINITY, NULL, \
  "a rate or a quota percentage", "sweep: the last step's; with --search " \
  "the\nhighest rate it may try") \
X(STEPS, "steps", "N", int, steps, 1, 1000, NULL, NULL, "sweep: steps from " \
  "--from to --to, 1 to 1000") \
X(SLO, "slo", "LIST", slo, slo, 0, 0, NULL, NULL, "sweep: what every step " \
  "must meet: p50 p90 p99\np99.9 p99.99 max = VALUE[us|ms|s], comma " \
  "separated\n(p99=1ms,max=20ms); the flag may be given more\nthan once") \
X(QUOTA_SWEEP, "quota", NULL, set, sweep, OPTS_SWEEP_QUOTA, 0, NULL, NULL, \
  "sweep quota percentages at a fixed --rate") \
X(SEARCH, "search", NULL, set, search, true, 0, NULL, NULL, "sweep: find " \
  "the capacity: double the rate from\n--from until a step misses, then " \
  "bisect") \
X(RESOLUTION, "resolution", "PCT", pct, resolution_pct, 0.1, 100, "5", \
  "a percentage from 0.1 to 100 (5, 2.5%)", "search: bisect until the " \
  "rate that met and the\none that missed are this close, 0.1 to 100") \
X(SEARCHES, "searches", "N", int, searches, 1, SEARCH_MAX, "1", NULL, \
  "search: the whole search N times (1 to 100),\neach from the same " \
  "start: the capacity's median\nand the interval over them, unstable " \
  "when some\nfound one and some none") \
X(START, "start", "RATE", rate, start, 0, INFINITY, NULL, "a rate", \
  "search: start every search warm at RATE, a\ncapacity found before " \
  "(between --from and --to)") \
X(STEP_SAMPLES, "step-samples", "N", int, step_samples, 0, 100000000, "0", \
  NULL, "sweep: a step that sends N datagrams in less\nthan --duration " \
  "ends there (at least 1 s;\n0: every step lasts --duration)") \
X(CSV, "csv", "FILE", text, csv, 0, 0, NULL, NULL, "sweep: write a row per " \
  "run as CSV") \
X(PAUSE, "pause", "MS", ms, pause_ms, 0, MAX_MS, "500", NULL, "sweep: idle " \
  "time between steps") \
X(REPEAT, "repeat", "N", int, repeat, 0, 10, "2", NULL, "sweep: runs " \
  "again, N times (0 to 10), the steps of\na sweep that is not monotonic " \
  "(a step failed below\none that met) to measure the noise (0: no " \
  "repeats;\nnot with --search, see --searches)") \
X(LISTEN, "listen", "URL", addr, listen, 0, KIND(UDP), NULL, \
  "echo serves udp:// only", "echo: where to serve (udp://ADDR:PORT)") \
X(SERVICE, "service-us", "N", int, service_us, 0, 1000000, "0", NULL, \
  "echo: spend N us per datagram (0 to 1000000),\none at a time: a target " \
  "whose capacity is 1e6/N\ndatagrams per second") \
X(HELP, "help", NULL, set, mode, OPTS_HELP, 0, NULL, NULL, "this text " \
  "(also -h)")

enum {
#define X(id, ...) O_##id,
	LOADGEN_FLAGS(X)
#undef X
	O_COUNT
};

static const struct flag flags[] = {
#define X(id, key, value, kind, fld, low, high, dflt, phrase, text) \
	{ .set = set_##kind, .flag = "--" key, \
	  .off = offsetof(struct opts, fld), \
	  .size = sizeof(((struct opts *)0)->fld), .lo = low, .hi = high, \
	  .what = phrase },
	LOADGEN_FLAGS(X)
#undef X
};

/* lib/opt hands a value to its row's parse(): one per row, each handing
 * it to its flag's kind. */
#define X(id, ...) \
static int parse_##id(void *o, const char *v, char *err, size_t errlen) \
{ \
	return flags[O_##id].set(o, &flags[O_##id], v, err, errlen); \
}
LOADGEN_FLAGS(X)
#undef X

const struct opt opts_table[] = {
#define X(id, key, value, kind, fld, low, high, dflt, phrase, text) \
	{ .name = key, .type = OPT_FUNC, .off = offsetof(struct opts, fld), \
	  .def = dflt, .arg = value, .bare = value ? NULL : "", .help = text, \
	  .parse = parse_##id },
	LOADGEN_FLAGS(X)
#undef X
};
const int opts_ntable = O_COUNT;

void opts_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	/* the states no flag's value gives: no quota, probing, progress on
	 * a terminal */
	o->quota_pct = -1;
	o->probe = true;
	o->progress = -1;
	char err[256];
	/* the table's own values: a failure is a bug in it */
	if (opt_defaults(opts_table, opts_ntable, o, err, sizeof(err)) < 0)
		abort();
}

/* Checks across flags, once all are known. */
static int check(struct opts *o, char *err, size_t errlen)
{
	if (o->mode == OPTS_ECHO) {
		if (!addr_port(&o->listen))
			return why_set(err, errlen, "echo needs --listen "
				   "udp://ADDR:PORT");
		return 0;
	}
	if (!o->target_text[0])
		return why_set(err, errlen, "--target udp://ADDR:PORT is required");
	if (!o->flows)
		o->flows = o->threads;
	if (o->flows < o->threads)
		return why_set(err, errlen, "--flows %d is fewer than --threads %d: "
			   "every thread needs at least one flow", o->flows,
			   o->threads);
	/* the lowest and highest rate of the run, or of any step of a sweep */
	double lo = o->rate, hi = o->rate;
	if (o->mode == OPTS_SWEEP && o->search) {
		if (o->steps || o->sweep == OPTS_SWEEP_QUOTA)
			return why_set(err, errlen, "--search chooses its own rates: "
				   "drop %s", o->steps ? "--steps" : "--quota");
		if (!o->nslo || o->from <= 0 || o->to <= 0)
			return why_set(err, errlen, "--search needs --from, --to "
				   "and --slo");
		if (o->to <= o->from)
			return why_set(err, errlen, "--search: --to %g is not above "
				   "--from %g", o->to, o->from);
		if (o->start && (o->start < o->from || o->start > o->to))
			return why_set(err, errlen, "--start %g is not between --from "
				   "%g and --to %g", o->start, o->from, o->to);
	}
	if (o->start && !(o->mode == OPTS_SWEEP && o->search))
		return why_set(err, errlen, "--start is for sweep --search");
	if (o->mode == OPTS_SWEEP) {
		if (!o->search && (!o->steps || !o->nslo || o->from <= 0 ||
				   o->to <= 0))
			return why_set(err, errlen, "sweep needs --from, --to, "
				   "--steps and --slo");
		if (o->sweep == OPTS_SWEEP_QUOTA && o->rate <= 0)
			return why_set(err, errlen, "a quota sweep needs --rate");
		if (o->sweep == OPTS_SWEEP_QUOTA && o->quota_pct >= 0)
			return why_set(err, errlen, "a quota sweep sets the quota "
				   "itself: drop --cpu-quota");
		if (o->hlog || o->timeseries)
			return why_set(err, errlen, "sweep writes --json, --csv and "
				   "--hgrm; --hlog and --timeseries are for "
				   "single runs");
		if (o->sweep == OPTS_SWEEP_QUOTA &&
		    fmax(o->from, o->to) > MAX_QUOTA_PCT)
			return why_set(err, errlen, "--from/--to: a quota of %g%% "
				   "is above %d%%", fmax(o->from, o->to),
				   MAX_QUOTA_PCT);
		if (o->sweep == OPTS_SWEEP_RATE) {
			lo = fmin(o->from, o->to);
			hi = fmax(o->from, o->to);
			if (lo < MIN_RATE || hi > MAX_RATE)
				return why_set(err, errlen, "--from/--to: %g to %g "
					   "pps is outside %g to %.0f", lo, hi,
					   MIN_RATE, MAX_RATE);
		}
	} else if (o->rate <= 0) {
		return why_set(err, errlen, "--rate PPS is required");
	}
	if (hi / o->threads > MAX_PPS_PER_THREAD)
		return why_set(err, errlen, "a rate of %.0f pps is impossible with "
			   "%d thread%s: one thread paces at most %.0f pps; use "
			   "--threads %d or more", hi, o->threads,
			   o->threads == 1 ? "" : "s", MAX_PPS_PER_THREAD,
			   (int)ceil(hi / MAX_PPS_PER_THREAD));
	if (lo * o->duration_s < o->threads)
		return why_set(err, errlen, "a rate of %.17g pps for %.17g s is "
			   "fewer packets than --threads %d", lo, o->duration_s,
			   o->threads);
	if (hi * o->duration_s > MAX_PACKETS)
		return why_set(err, errlen, "a rate of %.17g pps for %.17g s is "
			   "over %.0e packets (--rate or --to times --duration)",
			   hi, o->duration_s, MAX_PACKETS);
	return 0;
}

void opts_usage(FILE *out)
{
	fputs(
"usage: loadgen --target udp://ADDR:PORT|tcp://ADDR:PORT|unix:///PATH --rate PPS\n"
"               [options]\n"
"       loadgen sweep --target URL --from R1 --to R2 --steps N\n"
"                     --slo p99=1ms [options]\n"
"       loadgen sweep --quota --rate PPS --from Q1% --to Q2% --steps N --slo ...\n"
"       loadgen sweep --search --target URL --from R1 --to R2 --slo p99=1ms\n"
"                     [--resolution PCT] [--searches N] [--start R] [options]\n"
"       loadgen echo --listen udp://ADDR:PORT [--service-us N]\n"
"       loadgen merge --json OUT [--hgrm OUT] [--partial] FILE.hlog...\n"
"\n"
"Open-loop load: every datagram (or TCP message) has an intended send time\n"
"on a fixed schedule; latency is measured from it (corrected for\n"
"coordinated omission) and from the actual send time (uncorrected).\n"
"Defaults in parentheses.\n"
"\n", out);
	opt_usage(out, opts_table, opts_ntable);
	fputs(
"\n"
"sweep: one run per step from --from to --to (rates, or with --quota\n"
"quota percentages at a fixed --rate); prints each step and the capacity:\n"
"the highest rate (lowest quota) up to which every step met every --slo.\n"
"Writes --json and --csv FILE, and with --hgrm FILE one distribution per\n"
"step (FILE-<step>.hgrm).\n"
"\n"
"sweep --search: the rate doubles from --from until a step misses the SLO\n"
"(at most --to), then the gap between the last rate that met and the first\n"
"that missed is halved until it is within --resolution; the capacity is the\n"
"last rate that met. --searches repeats it, each search from the same start\n"
"(--from, or with --start warm near a capacity found before, in small steps\n"
"that grow), never from another's answer: the capacity is their median with\n"
"the interval over them, or \"unstable\" with the share that found one when\n"
"some found one and some none. Each step says why it missed: objective,\n"
"loss, sender or throttled.\n"
"\n"
"echo: a small UDP echo server for tests and benchmarks; with --service-us\n"
"a target whose capacity is known.\n"
"\n"
"exit: 0 done, 64 bad usage, 69 target or resource unavailable, 70 internal\n"
"failure, 71 the system refused (cgroup permission), 130 interrupted\n"
"(results so far are printed and written).\n", out);
}

int opts_parse(struct opts *o, int argc, char **argv, char *err, size_t errlen)
{
	if (argc > 1 && strcmp(argv[1], "sweep") == 0)
		o->mode = OPTS_SWEEP;
	else if (argc > 1 && strcmp(argv[1], "echo") == 0)
		o->mode = OPTS_ECHO;
	/* A mode's flags follow its word, which getopt takes for the program
	 * name. optind 0, not 1, makes glibc start over: with 1 it goes on
	 * inside the cluster an earlier parse stopped in ("-hx"), in that
	 * parse's argv. */
	if (o->mode != OPTS_RUN) {
		argc--;
		argv++;
	}
	static struct option longopts[O_COUNT + 1];
	static char names[1024];
	if (!longopts[0].name &&
	    opt_longopts(opts_table, opts_ntable, longopts, names,
			 sizeof(names), 256) < 0)
		abort();	/* names[] too small for the table */
	optind = 0;
	opterr = 0;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		if (c == 'h' || (c == 256 && li == O_HELP)) {
			o->mode = OPTS_HELP;
			return 0;
		}
		if (c == '?')
			return why_set(err, errlen, "unknown option '%s' (see "
				   "loadgen --help)", argv[optind - 1]);
		if (c == ':')
			return why_set(err, errlen, "option '%s' needs a value",
				   argv[optind - 1]);
		if (opt_parse(&opts_table[li], o, optarg ? optarg
			      : opts_table[li].bare, err, errlen) < 0)
			return -1;
	}
	if (optind < argc)
		return why_set(err, errlen, "unexpected argument '%s' (see "
			   "loadgen --help)", argv[optind]);
	return check(o, err, errlen);
}
