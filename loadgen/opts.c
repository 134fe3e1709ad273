/* opts: getopt_long over loadgen's flags, with checked number parsing. */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
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
 * period the kernel is given, and no host here has as many. */
#define MAX_QUOTA_PCT	100000.0
/* The reply bitmap holds a bit per packet: 1e11 packets is 12.5 GB. */
#define MAX_PACKETS	1e11
/* Timeouts, windows and pauses end up in poll(2)'s int milliseconds. */
#define MAX_MS		86400000

void opts_usage(FILE *out)
{
	fputs(
"usage: loadgen --target udp://ADDR:PORT|tcp://ADDR:PORT --rate PPS [options]\n"
"       loadgen sweep --target URL --from R1 --to R2 --steps N\n"
"                     --slo p99=1ms [options]\n"
"       loadgen sweep --quota --rate PPS --from Q1% --to Q2% --steps N --slo ...\n"
"       loadgen echo --listen udp://ADDR:PORT\n"
"       loadgen merge --json OUT [--hgrm OUT] FILE.hlog...\n"
"\n"
"Open-loop load: every datagram (or TCP message) has an intended send time\n"
"on a fixed schedule; latency is measured from it (corrected for\n"
"coordinated omission) and from the actual send time (uncorrected).\n"
"\n"
"  --target URL          where to send (udp://1.2.3.4:5, udp://[::1]:5, or\n"
"                        tcp://...: fixed-size messages on connections);\n"
"                        the target must echo what it gets back\n"
"  --rate PPS            packets per second, all threads (20000, 20k, 1.5M;\n"
"                        0.001 to 512M)\n"
"  --duration SECONDS    how long to send (30, 30s, 500ms; default 10)\n"
"  --threads N           sender threads, one event loop each (default 1)\n"
"  --flows N             UDP sockets or TCP connections, spread over the\n"
"                        threads (default: one per thread)\n"
"  --size BYTES          datagram payload, 40..65507 (default 64)\n"
"  --cpus LIST           pin the threads to these CPUs (0, 0-3, 0,2)\n"
"  --cpu-quota PERCENT   run under a CPU bandwidth quota (20% of one CPU;\n"
"                        200% = two CPUs) in a cgroup made for the run\n"
"  --quota-period-us N   the quota's period (default 100000)\n"
"  --quota-period TIME   the same as a time (100ms)\n"
"  --cgroup PATH|SLICE   use this existing cgroup (or a new child of this\n"
"                        systemd slice) instead of making one\n"
"  --quota-scope SCOPE   process (default) or threads: only the sender\n"
"                        threads go under the quota\n"
"  --timeout MS          a reply later than this is late; after the last\n"
"                        send, wait this long for replies (default 2000)\n"
"  --no-probe            do not check the target answers before the run\n"
"  --timer MODE          timerfd (default: microsecond pacing) or epoll\n"
"                        (1 ms epoll_wait timeouts; no timerfd in loadgen's\n"
"                        own epoll set, see loadgen(1) on RT kernels)\n"
"  --spin-us N           wake N us before each send and busy-wait the rest\n"
"                        of the way: a more precise schedule for CPU time\n"
"                        (default 0: off; see loadgen(1) before using it\n"
"                        with --cpu-quota)\n"
"  --rt-priority N       run the sender threads SCHED_FIFO at N (1-98): RT\n"
"                        clients of the target\n"
"  --watch-cgroup PATH   also report the CPU throttling this other cgroup\n"
"                        (a co-tenant's) got during the run\n"
"  --json FILE           write every counter and percentile as JSON\n"
"  --hgrm FILE           write the corrected latency distribution (HdrHistogram\n"
"                        percentile format, ms) and FILE.uncorrected.hgrm\n"
"  --hlog FILE           write both histograms as an HdrHistogram interval\n"
"                        log (corrected untagged, Tag=uncorrected): the\n"
"                        input of loadgen merge and HdrHistogram's tools\n"
"  --timeseries FILE     write count, p50, p99, max per window as CSV\n"
"  --window MS           the time series window (default 100)\n"
"  --no-progress         no live progress line (shown only on a terminal)\n"
"  -h, --help            this text\n"
"\n"
"sweep: one run per step from --from to --to (rates, or with --quota\n"
"quota percentages at a fixed --rate); prints each step and the capacity:\n"
"the highest rate (lowest quota) up to which every step met every --slo\n"
"(p50 p90 p99 p99.9 p99.99 max = VALUE[us|ms|s], comma separated; the flag\n"
"may be given more than once). Writes --json and --csv FILE, and with\n"
"--hgrm FILE one distribution per step (FILE-<step>.hgrm).\n"
"  --pause MS            idle time between steps (default 500)\n"
"  --repeat N            runs again, N times, the steps of a sweep that is\n"
"                        not monotonic (a step failed below one that met)\n"
"                        to measure the noise (default 2; 0: no repeats)\n"
"\n"
"echo: a small UDP echo server for tests and benchmarks.\n"
"\n"
"exit: 0 done, 64 bad usage, 69 target or resource unavailable, 70 internal\n"
"failure, 71 the system refused (cgroup permission), 130 interrupted\n"
"(results so far are printed and written).\n", out);
}

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

/* flag's value v, a whole number from lo to hi, into *n; else an error
 * naming what it counts ("number of us") and the range, in unit. */
static int count(const char *flag, const char *v, int lo, int hi,
		 const char *what, const char *unit, int *n, char *err,
		 size_t errlen)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (end == v || *end || errno || x < lo || x > hi)
		return why_set(err, errlen, "%s '%s' is not a %s from %d to %d%s",
			       flag, v, what, lo, hi, unit);
	*n = (int)x;
	return 0;
}

static int percent(const char *s, double *v)
{
	const char *suf;
	if (number(s, v, &suf) < 0 || (*suf && strcmp(suf, "%") != 0))
		return -1;
	return *v > 0 ? 0 : -1;
}

/* A rate parsed, but one loadgen cannot send at? */
static int rate_range(const char *flag, const char *v, double rate,
		      char *err, size_t errlen)
{
	if (rate >= MIN_RATE && rate <= MAX_RATE)
		return 0;
	return why_set(err, errlen, "%s '%s' is outside %g to %.0f packets per "
		   "second (%.0f pps per thread, %d threads)", flag, v,
		   MIN_RATE, MAX_RATE, MAX_PPS_PER_THREAD, OPTS_MAX_THREADS);
}

enum {
	O_TARGET = 256, O_RATE, O_DURATION, O_THREADS, O_FLOWS, O_SIZE, O_CPUS,
	O_QUOTA, O_PERIOD_US, O_PERIOD, O_CGROUP, O_SCOPE, O_TIMEOUT,
	O_NOPROBE, O_JSON, O_HGRM, O_TS, O_WINDOW, O_NOPROGRESS, O_FROM,
	O_TO, O_STEPS, O_SLO, O_QUOTA_SWEEP, O_CSV, O_PAUSE, O_LISTEN, O_TIMER,
	O_SPIN, O_RT_PRIO, O_WATCH_CG, O_REPEAT, O_HLOG,
};

static const struct option longopts[] = {
	{ "target", required_argument, NULL, O_TARGET },
	{ "rate", required_argument, NULL, O_RATE },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "threads", required_argument, NULL, O_THREADS },
	{ "flows", required_argument, NULL, O_FLOWS },
	{ "size", required_argument, NULL, O_SIZE },
	{ "cpus", required_argument, NULL, O_CPUS },
	{ "cpu-quota", required_argument, NULL, O_QUOTA },
	{ "quota-period-us", required_argument, NULL, O_PERIOD_US },
	{ "quota-period", required_argument, NULL, O_PERIOD },
	{ "cgroup", required_argument, NULL, O_CGROUP },
	{ "quota-scope", required_argument, NULL, O_SCOPE },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "no-probe", no_argument, NULL, O_NOPROBE },
	{ "json", required_argument, NULL, O_JSON },
	{ "hgrm", required_argument, NULL, O_HGRM },
	{ "hlog", required_argument, NULL, O_HLOG },
	{ "timeseries", required_argument, NULL, O_TS },
	{ "window", required_argument, NULL, O_WINDOW },
	{ "no-progress", no_argument, NULL, O_NOPROGRESS },
	{ "from", required_argument, NULL, O_FROM },
	{ "to", required_argument, NULL, O_TO },
	{ "steps", required_argument, NULL, O_STEPS },
	{ "slo", required_argument, NULL, O_SLO },
	{ "quota", no_argument, NULL, O_QUOTA_SWEEP },
	{ "csv", required_argument, NULL, O_CSV },
	{ "pause", required_argument, NULL, O_PAUSE },
	{ "listen", required_argument, NULL, O_LISTEN },
	{ "timer", required_argument, NULL, O_TIMER },
	{ "spin-us", required_argument, NULL, O_SPIN },
	{ "rt-priority", required_argument, NULL, O_RT_PRIO },
	{ "watch-cgroup", required_argument, NULL, O_WATCH_CG },
	{ "repeat", required_argument, NULL, O_REPEAT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void opts_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->duration_s = 10;
	o->threads = 1;
	o->size = 64;
	o->quota_pct = -1;
	o->period_us = 100000;
	o->window_ms = 100;
	o->timeout_ms = 2000;
	o->probe = true;
	o->progress = -1;
	o->pause_ms = 500;
	o->repeat = 2;
}

/* One flag's value into o. Returns 0 or -1 with err filled. */
static int apply(struct opts *o, int c, const char *v, const char *flag,
		 char *err, size_t errlen)
{
	int64_t us;
	char why[256];
	switch (c) {
	case O_TARGET:
		if (addr_parse(&o->target, v, o->addr_flags, why,
			       sizeof(why)) < 0)
			return why_set(err, errlen, "--target: %s", why);
		if (o->target.kind != ADDR_UDP && o->target.kind != ADDR_TCP)
			return why_set(err, errlen, "--target '%s': say udp:// or "
				   "tcp://", v);
		snprintf(o->target_text, sizeof(o->target_text), "%s", v);
		return 0;
	case O_LISTEN:
		if (addr_parse(&o->listen, v, o->addr_flags, why,
			       sizeof(why)) < 0)
			return why_set(err, errlen, "--listen: %s", why);
		if (o->listen.kind != ADDR_UDP)
			return why_set(err, errlen, "--listen '%s': echo serves "
				   "udp:// only", v);
		return 0;
	case O_RATE:
		if (opts_parse_rate(v, &o->rate) < 0)
			return why_set(err, errlen, "--rate '%s' is not a rate "
				   "(packets per second: 20000, 20k, 1.5M)", v);
		return rate_range(flag, v, o->rate, err, errlen);
	case O_DURATION:
		if (opts_parse_time_us(v, &us) < 0 || us < 1000)
			return why_set(err, errlen, "--duration '%s' is not a "
				   "duration of at least 1 ms (30, 30s, 500ms)", v);
		o->duration_s = (double)us / 1e6;
		return 0;
	case O_THREADS:
		return count(flag, v, 1, OPTS_MAX_THREADS, "number", "",
			     &o->threads, err, errlen);
	case O_FLOWS:
		return count(flag, v, 1, 4096, "number", "", &o->flows, err,
			     errlen);
	case O_SIZE:
		return count(flag, v, WIRE_HDR_LEN, WIRE_MAX_LEN, "payload size",
			     " bytes", &o->size, err, errlen);
	case O_CPUS:
		o->ncpus = rt_parse_cpus(v, o->cpus, OPTS_MAX_CPUS, why,
					 sizeof(why));
		if (o->ncpus < 0)
			return why_set(err, errlen, "--cpus: %s", why);
		return 0;
	case O_QUOTA:
		if (percent(v, &o->quota_pct) < 0 ||
		    o->quota_pct > MAX_QUOTA_PCT)
			return why_set(err, errlen, "--cpu-quota '%s' is not a "
				   "percentage of one CPU above 0 and at most "
				   "%.0f%% (20%%, 150%%)", v, MAX_QUOTA_PCT);
		return 0;
	case O_PERIOD_US:
	case O_PERIOD:
		if ((c == O_PERIOD ? opts_parse_time_us(v, &us)
				   : latency_us(v, &us)) < 0 ||
		    us < 1000 || us > 1000000)
			return why_set(err, errlen, "%s '%s' is not a period from "
				   "1000 us to 1 s", flag, v);
		o->period_us = us;
		return 0;
	case O_CGROUP:
		o->cgroup = v;
		return 0;
	case O_SCOPE:
		if (strcmp(v, "process") && strcmp(v, "threads"))
			return why_set(err, errlen, "--quota-scope '%s': say "
				   "process or threads", v);
		o->quota_threads = strcmp(v, "threads") == 0;
		return 0;
	case O_TIMEOUT:
	case O_WINDOW:
	case O_PAUSE: {
		int64_t ms;
		if (millis(v, &ms) < 0 || (c != O_PAUSE && ms < 1))
			return why_set(err, errlen, "%s '%s' is not a time in ms "
				   "from %d to %d (or with a unit: 2s, 500ms)",
				   flag, v, c != O_PAUSE, MAX_MS);
		*(c == O_TIMEOUT ? &o->timeout_ms
		  : c == O_WINDOW ? &o->window_ms : &o->pause_ms) = ms;
		return 0;
	}
	case O_TIMER:
		if (strcmp(v, "timerfd") && strcmp(v, "epoll"))
			return why_set(err, errlen, "--timer '%s': say timerfd or "
				   "epoll", v);
		o->epoll_timer = strcmp(v, "epoll") == 0;
		return 0;
	case O_SPIN:
		return count(flag, v, 0, OPTS_MAX_SPIN_US, "number of us", "",
			     &o->spin_us, err, errlen);
	case O_RT_PRIO:
		return count(flag, v, 1, 98, "SCHED_FIFO priority", "",
			     &o->rt_prio, err, errlen);
	case O_REPEAT:
		return count(flag, v, 0, 10, "number", "", &o->repeat, err,
			     errlen);
	case O_WATCH_CG:
		o->watch_cgroup = v;
		return 0;
	case O_NOPROBE:
		o->probe = false;
		return 0;
	case O_NOPROGRESS:
		o->progress = 0;
		return 0;
	case O_JSON:
		o->json = v;
		return 0;
	case O_HGRM:
		o->hgrm = v;
		return 0;
	case O_HLOG:
		o->hlog = v;
		return 0;
	case O_TS:
		o->timeseries = v;
		return 0;
	case O_CSV:
		o->csv = v;
		return 0;
	case O_QUOTA_SWEEP:
		o->sweep = OPTS_SWEEP_QUOTA;
		return 0;
	case O_FROM:
	case O_TO: {
		double *dst = c == O_FROM ? &o->from : &o->to;
		if (opts_parse_rate(v, dst) < 0 && percent(v, dst) < 0)
			return why_set(err, errlen, "%s '%s' is not a rate or a "
				   "quota percentage", flag, v);
		return 0;
	}
	case O_STEPS:
		return count(flag, v, 1, 1000, "number", "", &o->steps, err,
			     errlen);
	case O_SLO: {
		/* several --slo add up: --slo p99.9=1ms --slo p99=500us */
		int n = opts_parse_slo(v, o->slo + o->nslo,
				       OPTS_MAX_SLO - o->nslo);
		if (n < 0)
			return why_set(err, errlen, "--slo '%s' is not a list of "
				   "PERCENTILE=LATENCY (p99=1ms,max=20ms; "
				   "percentiles p50 p90 p99 p99.9 p99.99 max; "
				   "at most %d in all)", v, OPTS_MAX_SLO);
		for (int i = o->nslo; i < o->nslo + n; i++)
			for (int k = 0; k < i; k++)
				if (strcmp(o->slo[i].name, o->slo[k].name) == 0)
					return why_set(err, errlen, "--slo '%s': %s "
						   "is given twice", v,
						   o->slo[i].name);
		o->nslo += n;
		return 0;
	}
	default:
		return why_set(err, errlen, "unknown option %s", flag);
	}
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
	if (o->mode == OPTS_SWEEP) {
		if (!o->steps || !o->nslo || o->from <= 0 || o->to <= 0)
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
				   "is above %.0f%%", fmax(o->from, o->to),
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
	optind = 0;
	opterr = 0;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		char flag[64];
		if (c >= O_TARGET)
			snprintf(flag, sizeof(flag), "--%s", longopts[li].name);
		else
			snprintf(flag, sizeof(flag), "%s", argv[optind - 1]);
		if (c == 'h') {
			o->mode = OPTS_HELP;
			return 0;
		}
		if (c == '?')
			return why_set(err, errlen, "unknown option '%s' (see "
				   "loadgen --help)", flag);
		if (c == ':')
			return why_set(err, errlen, "option '%s' needs a value",
				   flag);
		if (apply(o, c, optarg, flag, err, errlen) < 0)
			return -1;
	}
	if (optind < argc)
		return why_set(err, errlen, "unexpected argument '%s' (see "
			   "loadgen --help)", argv[optind]);
	return check(o, err, errlen);
}
