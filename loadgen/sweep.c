/* sweep: a series of runs, or searches, and the capacity verdict over them. */
#include "sweep.h"

#include <errno.h>
#include <stdarg.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "clock.h"
#include "newfile.h"
#include "output.h"
#include "results.h"
#include "search.h"

double sweep_value(const struct opts *o, int i)
{
	if (o->steps <= 1)
		return o->from;
	return o->from + (o->to - o->from) * i / (o->steps - 1);
}

int sweep_step_at(const struct opts *o, int pos)
{
	/* rates get harder as they rise, quotas as they fall */
	bool rising = o->to >= o->from;
	bool easy_first = o->sweep == OPTS_SWEEP_QUOTA ? !rising : rising;
	return easy_first ? pos : o->steps - 1 - pos;
}

/* "850 us", "2.6 ms", "1.20 s" */
static void fmt_us(char *buf, size_t len, int64_t us)
{
	if (us < 1000)
		snprintf(buf, len, "%lld us", (long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "%.3g ms", (double)us / 1e3);
	else
		snprintf(buf, len, "%.3g s", (double)us / 1e6);
}

static void slo_name(const struct opts_slo *s, char *buf, size_t len)
{
	/* p99_9 is the JSON key; people write p99.9 */
	snprintf(buf, len, "%s", s->name);
	for (char *c = buf; *c; c++)
		if (*c == '_')
			*c = '.';
}

static void add_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Append a reason to why, "; " between reasons. */
static void add_why(char *why, size_t len, const char *fmt, ...)
{
	size_t n = strlen(why);
	va_list ap;
	if (n + 2 >= len)
		return;
	if (n)
		n += (size_t)snprintf(why + n, len - n, "; ");
	va_start(ap, fmt);
	vsnprintf(why + n, len - n, fmt, ap);
	va_end(ap);
}

const char *sweep_cause_name(enum sweep_cause c)
{
	static const char *names[] = {
		[SWEEP_INTERRUPTED] = "interrupted",
		[SWEEP_THROTTLED] = "throttled", [SWEEP_LOSS] = "loss",
		[SWEEP_SENDER] = "sender", [SWEEP_OBJECTIVE] = "objective",
	};
	return names[c];
}

/* Did every objective hold on the latency from the actual send times? A
 * sender that fell behind then is the only reason the run missed. */
static bool kept_up(const struct opts *o, const struct run_result *r)
{
	for (int i = 0; i < o->nslo; i++)
		if (hist_percentile(&r->uncorrected, o->slo[i].pct) > o->slo[i].us)
			return false;
	return true;
}

void sweep_judge_run(const struct opts *o, const struct run_result *r,
		     int pos, struct sweep_run *s)
{
	char a[48], b[48], c[48];
	bool over = false;
	memset(s, 0, sizeof(*s));
	s->pos = pos;
	s->rate = r->target_rate;
	s->achieved = r->achieved_rate;
	if (r->interrupted)
		add_why(s->why, sizeof(s->why), "interrupted");
	if (r->sent == 0)
		add_why(s->why, sizeof(s->why), "nothing sent");
	if (!r->rate_ok)
		add_why(s->why, sizeof(s->why), "achieved %.0f of %.0f pps",
			r->achieved_rate, r->target_rate);
	if (r->lost) {
		snprintf(s->sat_why, sizeof(s->sat_why), "lost %llu of %llu "
			 "(%.2g%%)", (unsigned long long)r->lost,
			 (unsigned long long)r->sent,
			 100.0 * (double)r->lost / (double)r->sent);
		add_why(s->why, sizeof(s->why), "%s: no reply within %lld ms",
			s->sat_why, (long long)o->timeout_ms);
	}
	/* datagrams that never left: loadgen's side, not the target's */
	if (r->send_errors)
		add_why(s->why, sizeof(s->why), "%llu sends failed (ENOBUFS or "
			"a full socket buffer on loadgen's host)",
			(unsigned long long)r->send_errors);
	if (r->refused)
		add_why(s->why, sizeof(s->why), "%llu refused (ICMP port "
			"unreachable: nothing listened)",
			(unsigned long long)r->refused);
	for (int i = 0; i < o->nslo; i++) {
		s->slo_us[i] = hist_percentile(&r->corrected, o->slo[i].pct);
		if (s->slo_us[i] <= o->slo[i].us)
			continue;
		over = true;
		slo_name(&o->slo[i], a, sizeof(a));
		fmt_us(b, sizeof(b), s->slo_us[i]);
		fmt_us(c, sizeof(c), o->slo[i].us);
		add_why(s->why, sizeof(s->why), "%s %s > %s", a, b, c);
	}
	s->meets = !s->why[0];
	s->saturated = s->sat_why[0] != 0;
	const struct cg_stat *w = &r->watched.stat;
	if (s->meets)
		s->cause = SWEEP_MET;
	else if (r->interrupted)
		s->cause = SWEEP_INTERRUPTED;
	else if (r->watched.path[0] && w->nr_throttled)
		s->cause = SWEEP_THROTTLED;
	else if (r->lost || r->send_errors || r->refused)
		s->cause = SWEEP_LOSS;
	else if ((!r->rate_ok || !r->sent) && kept_up(o, r))
		s->cause = SWEEP_SENDER;
	else
		s->cause = over ? SWEEP_OBJECTIVE : SWEEP_SENDER;
	if (s->cause == SWEEP_THROTTLED)
		add_why(s->why, sizeof(s->why), "the watched cgroup was "
			"throttled in %llu periods, %.1f ms in all",
			(unsigned long long)w->nr_throttled,
			(double)w->throttled_us / 1e3);
}

void sweep_verdict(const struct sweep_run *runs, int n, int npos,
		   struct sweep_verdict *v)
{
	v->capacity = v->first_fail = v->last_met = v->knee = -1;
	for (int p = 0; p < npos; p++) {
		bool all = true, seen = false, sat = true;
		for (int i = 0; i < n; i++) {
			if (runs[i].pos != p)
				continue;
			seen = true;
			all &= runs[i].meets;
			sat &= runs[i].saturated;
		}
		if (!seen)
			continue;
		if (!all && v->first_fail < 0)
			v->first_fail = p;
		if (all)
			v->last_met = p;
		if (all && v->first_fail < 0)
			v->capacity = p;
		if (sat && v->knee < 0)
			v->knee = p;
	}
	v->monotonic = v->first_fail < 0 || v->last_met < v->first_fail;
}

/* The per-step distribution file: FILE.hgrm -> FILE-20000pps.hgrm, a
 * repeat FILE-20000pps-r2.hgrm, a search's FILE-20000pps-s1.hgrm. */
static void step_hgrm(const char *file, double rate, double quota,
		      bool by_quota, const char *suffix, char *out, size_t len)
{
	size_t n = strlen(file);
	int stem = n > 5 && strcmp(file + n - 5, ".hgrm") == 0 ? (int)n - 5
							       : (int)n;
	char tag[64];
	if (by_quota)
		snprintf(tag, sizeof(tag), "%gpct", quota);
	else
		snprintf(tag, sizeof(tag), "%.10gpps", rate);
	snprintf(out, len, "%.*s-%s%s.hgrm", stem, file, tag, suffix);
}

/* The throttling a row shows: --watch-cgroup's, else the run's own. */
static const struct cg_stat *throttling(const struct run_result *r)
{
	return r->watched.path[0] ? &r->watched.stat : &r->cgroup.stat;
}

static void row(FILE *out, double rate, double quota,
		const struct run_result *r, const struct sweep_run *s,
		int pass)
{
	char q[32] = "-";
	if (quota >= 0)
		snprintf(q, sizeof(q), "%.1f%%", quota);
	fprintf(out, "%10.0f %7s %10.0f %9lld %9lld %9lld %9lld %8llu %6llu  %s%s%s%s\n",
		rate, q, r->achieved_rate,
		(long long)hist_percentile(&r->corrected, 50),
		(long long)hist_percentile(&r->corrected, 99),
		(long long)hist_percentile(&r->corrected, 99.9),
		(long long)hist_max(&r->corrected),
		(unsigned long long)r->lost,
		(unsigned long long)throttling(r)->nr_throttled,
		s->meets ? "yes" : "no: ", s->why,
		pass ? "  (repeat)" : "",
		s->saturated ? "  [saturated]" : "");
}

/* A search's rows: the objectives' own percentiles, and the cause. */
static void search_header(FILE *out, const struct opts *o)
{
	char name[24], col[32];
	fprintf(out, "%6s %10s %10s", "search", "rate", "achieved");
	for (int i = 0; i < o->nslo; i++) {
		slo_name(&o->slo[i], name, sizeof(name));
		snprintf(col, sizeof(col), "%s_us", name);
		fprintf(out, " %9s", col);
	}
	fprintf(out, " %8s %6s  %s\n", "lost", "thrtl", "slo");
}

static void search_row(FILE *out, const struct opts *o,
		       const struct run_result *r, const struct sweep_run *s,
		       int search)
{
	fprintf(out, "%6d %10.10g %10.0f", search, s->rate, s->achieved);
	for (int i = 0; i < o->nslo; i++)
		fprintf(out, " %9lld", (long long)s->slo_us[i]);
	fprintf(out, " %8llu %6llu  ", (unsigned long long)r->lost,
		(unsigned long long)throttling(r)->nr_throttled);
	if (s->meets)
		fprintf(out, "met\n");
	else
		fprintf(out, "missed (%s): %s\n", sweep_cause_name(s->cause),
			s->why);
}

static void csv_row(FILE *f, double rate, double quota,
		    const struct run_result *r, const struct sweep_run *s,
		    int pass)
{
	fprintf(f, "%.3f,", rate);
	if (quota >= 0)
		fprintf(f, "%.3f", quota);
	fprintf(f, ",%.3f", r->achieved_rate);
	for (int i = 0; i < 6; i++)
		fprintf(f, ",%lld", (long long)hist_percentile(&r->corrected,
							      output_pcts[i]));
	fprintf(f, ",%llu,%llu,%llu,%llu,%d,%d\n", (unsigned long long)r->sent,
		(unsigned long long)r->lost,
		(unsigned long long)r->cgroup.stat.nr_throttled,
		(unsigned long long)r->cgroup.stat.throttled_us, s->meets,
		pass);
}

static void pause_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static double now_s(void)
{
	return (double)clock_ns(CLOCK_MONOTONIC) / 1e9;
}

/* Everything a sweep carries from its runs to its report. */
struct sweep {
	const struct opts *o;
	bool by_quota;
	struct sweep_run *runs;
	json_t *steps;
	int n, cap;
	FILE *csv;		/* --csv's temporary file, by newfile */
	struct newfile csv_file;
	double t0;
	int planned;		/* runs the plan holds so far */
};

static json_t *value_json(const struct sweep *w, int pos)
{
	int i = sweep_step_at(w->o, pos);
	double v = sweep_value(w->o, i);
	double rate = w->by_quota ? w->o->rate : v;
	return json_pack("{s:f, s:o}", "target_rate", rate, "cpu_quota_pct",
			 w->by_quota ? json_real(v) : w->o->quota_pct >= 0
			 ? json_real(w->o->quota_pct) : json_null());
}

static void step_label(const struct sweep *w, int pos, char *buf, size_t len)
{
	double v = sweep_value(w->o, sweep_step_at(w->o, pos));
	if (w->by_quota)
		snprintf(buf, len, "quota %.1f%%", v);
	else
		snprintf(buf, len, "%.0f pps", v);
}

/* A step's length: --duration, or with --step-samples what sending that
 * many takes at rate, when that is shorter (at least 1 s): a high rate's
 * percentiles need no more datagrams than a low one's. */
static double step_duration(const struct opts *o, double rate)
{
	if (!o->step_samples || rate <= 0)
		return o->duration_s;
	return fmin(o->duration_s, fmax(1, o->step_samples / rate));
}

/* One run at rate under quota (< 0: none), judged at pos: its row, its
 * CSV row and --hgrm file, and its step in the JSON, id (which step it
 * is: the step's value and pass of a sweep, a search's number and rate)
 * with what it measured. pass is a sweep's repeat (0: the first) or the
 * search's number. Returns 0, 130 when interrupted (the run is kept) or
 * another exit status with err filled (it is not). */
static int one(struct sweep *w, double rate, double quota, int pos, int pass,
	       json_t *id, char *err, size_t errlen)
{
	const struct opts *o = w->o;
	struct run_result r;
	struct opts step = *o;
	step.duration_s = step_duration(o, rate);
	int status = run_once(&step, rate, quota, &r, err, errlen);
	if (status && status != 130) {
		run_result_free(&r);
		json_decref(id);
		return status;
	}
	r.interrupted |= status == 130;	/* also in the probe, before any send */
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		struct sweep_run *m = realloc(w->runs, (size_t)w->cap * sizeof(*m));
		if (!m) {
			run_result_free(&r);
			json_decref(id);
			snprintf(err, errlen, "out of memory");
			return EX_OSERR;
		}
		w->runs = m;
	}
	struct sweep_run *s = &w->runs[w->n++];
	sweep_judge_run(o, &r, pos, s);
	if (o->search)
		search_row(stdout, o, &r, s, pass);
	else
		row(stdout, rate, quota, &r, s, pass);
	fflush(stdout);
	if (w->csv)
		csv_row(w->csv, rate, quota, &r, s, pass);
	json_t *values = json_object();
	for (int i = 0; i < o->nslo; i++)
		json_object_set_new(values, o->slo[i].name,
				    json_integer(s->slo_us[i]));
	json_object_update_new(id, json_pack("{s:o, s:b, s:o, s:o, s:b, s:o, s:o}",
		"objectives_us", values, "meets_slo", s->meets,
		"cause", s->meets ? json_null()
				  : json_string(sweep_cause_name(s->cause)),
		"why", s->meets ? json_null() : json_string(s->why),
		"saturated", s->saturated,
		"saturated_why", s->saturated ? json_string(s->sat_why)
					      : json_null(),
		"result", output_json(o, &r)));
	if (o->hgrm) {
		char file[4200], why[512], suffix[16] = "";
		if (o->search || pass)
			snprintf(suffix, sizeof(suffix), o->search ? "-s%d"
				 : "-r%d", o->search ? pass : pass + 1);
		step_hgrm(o->hgrm, rate, quota, w->by_quota, suffix, file,
			  sizeof(file));
		if (results_write_hgrm(&r.corrected, file, why, sizeof(why)) < 0) {
			fprintf(stderr, "loadgen: %s\n", why);
			json_object_set_new(id, "hgrm", json_null());
		} else {
			json_object_set_new(id, "hgrm", json_string(file));
		}
	}
	json_array_append_new(w->steps, id);
	run_result_free(&r);
	return status;
}

/* One run of the sweep's step at pos, its pass'th time. */
static int step(struct sweep *w, int pos, int pass, char *err, size_t errlen)
{
	const struct opts *o = w->o;
	double v = sweep_value(o, sweep_step_at(o, pos));
	char label[48];
	step_label(w, pos, label, sizeof(label));
	if (o->progress) {
		/* per run: its length, the pause and the drain seen so far */
		double each = w->n ? (now_s() - w->t0) / w->n
				   : o->duration_s + (double)o->pause_ms / 1e3 + 1;
		fprintf(stderr, "loadgen sweep: run %d of %d: %s%s, about %.0f s "
			"left\n", w->n + 1, w->planned, label,
			pass ? " (repeat)" : "", each * (w->planned - w->n));
	}
	json_t *id = value_json(w, pos);
	json_object_set_new(id, "pass", json_integer(pass));
	return one(w, w->by_quota ? o->rate : v, w->by_quota ? v : o->quota_pct,
		   pos, pass, id, err, errlen);
}

/* What the repeated positions showed: runs, how many met, and each
 * objective's range over them. */
static json_t *noise(struct sweep *w, int lo, int hi, FILE *out)
{
	const struct opts *o = w->o;
	json_t *all = json_array();
	for (int p = lo; p <= hi; p++) {
		int runs = 0, met = 0;
		int64_t mn[OPTS_MAX_SLO], mx[OPTS_MAX_SLO];
		for (int i = 0; i < w->n; i++) {
			const struct sweep_run *s = &w->runs[i];
			if (s->pos != p)
				continue;
			for (int k = 0; k < o->nslo; k++) {
				mn[k] = runs && mn[k] < s->slo_us[k] ? mn[k] : s->slo_us[k];
				mx[k] = runs && mx[k] > s->slo_us[k] ? mx[k] : s->slo_us[k];
			}
			runs++;
			met += s->meets;
		}
		if (!runs)
			continue;
		char label[48], a[48], b[48], name[24];
		step_label(w, p, label, sizeof(label));
		fprintf(out, "noise: %s: %d of %d runs met", label, met, runs);
		json_t *spread = json_object();
		for (int k = 0; k < o->nslo; k++) {
			slo_name(&o->slo[k], name, sizeof(name));
			fmt_us(a, sizeof(a), mn[k]);
			fmt_us(b, sizeof(b), mx[k]);
			fprintf(out, ", %s %s to %s", name, a, b);
			json_object_set_new(spread, o->slo[k].name,
				json_pack("[I, I]", (json_int_t)mn[k],
					  (json_int_t)mx[k]));
		}
		fputc('\n', out);
		json_t *j = value_json(w, p);
		json_object_update_new(j, json_pack("{s:i, s:i, s:o}", "runs",
			runs, "met", met, "spread_us", spread));
		json_array_append_new(all, j);
	}
	return all;
}

/* The verdict line, also kept in the JSON. */
static void verdict_text(const struct sweep *w, const struct sweep_verdict *v,
			 char *buf, size_t len)
{
	char cap[64], fail[64] = "";
	const char *why = "";
	for (int i = 0; v->first_fail >= 0 && i < w->n; i++)
		if (w->runs[i].pos == v->first_fail && !w->runs[i].meets) {
			why = w->runs[i].why;
			break;
		}
	if (v->first_fail >= 0)
		step_label(w, v->first_fail, fail, sizeof(fail));
	if (v->capacity < 0) {
		snprintf(buf, len, "capacity: none: the easiest step (%s) did "
			 "not meet the SLO (%s)%s", fail, why, v->monotonic ? ""
			 : "; the sweep is not monotonic: see the noise");
		return;
	}
	step_label(w, v->capacity, cap, sizeof(cap));
	if (v->first_fail < 0)
		snprintf(buf, len, "capacity: %s or more: every step met the "
			 "SLO", cap);
	else
		snprintf(buf, len, "capacity: %s: it and every easier step "
			 "met the SLO; %s did not (%s)%s", cap, fail, why,
			 v->monotonic ? "" : "; not monotonic: see the noise");
}

static json_t *knee_json(const struct sweep *w, const struct sweep_verdict *v)
{
	if (v->knee < 0)
		return json_null();
	json_t *j = value_json(w, v->knee);
	for (int i = 0; i < w->n; i++)
		if (w->runs[i].pos == v->knee && w->runs[i].saturated) {
			json_object_set_new(j, "why",
					    json_string(w->runs[i].sat_why));
			break;
		}
	return j;
}

/* The steps from --from to --to, the band of a sweep that is not
 * monotonic again, the verdict printed and its keys added to j. Returns
 * as one does. */
static int steps(struct sweep *w, json_t *j, char *err, size_t errlen)
{
	const struct opts *o = w->o;
	int status = 0;
	printf("%10s %7s %10s %9s %9s %9s %9s %8s %6s  %s\n", "rate", "quota",
	       "achieved", "p50_us", "p99_us", "p99.9_us", "max_us", "lost",
	       "thrtl", "slo");
	for (int p = 0; p < o->steps && !status; p++) {
		status = step(w, p, 0, err, errlen);
		if (!status && p + 1 < o->steps)
			pause_ms(o->pause_ms);
	}
	struct sweep_verdict v;
	sweep_verdict(w->runs, w->n, o->steps, &v);
	/* A failed step below one that met: run the band between again,
	 * every step of it once per pass, so that the passes see the host at
	 * different times. */
	int lo = v.first_fail, hi = v.last_met;
	bool repeated = !v.monotonic && o->repeat > 0 && !status;
	if (repeated) {
		printf("not monotonic: a step failed below one that met; "
		       "running the %d steps from %d to %d again, %d more "
		       "time%s\n", hi - lo + 1, sweep_step_at(o, lo) + 1,
		       sweep_step_at(o, hi) + 1, o->repeat,
		       o->repeat == 1 ? "" : "s");
		w->planned += (hi - lo + 1) * o->repeat;
	}
	for (int pass = 1; repeated && pass <= o->repeat && !status; pass++)
		for (int p = lo; p <= hi && !status; p++) {
			pause_ms(o->pause_ms);
			status = step(w, p, pass, err, errlen);
		}
	if (status && status != 130)
		return status;
	sweep_verdict(w->runs, w->n, o->steps, &v);
	json_t *noisy = repeated ? noise(w, lo, hi, stdout) : json_array();
	char text[512];
	verdict_text(w, &v, text, sizeof(text));
	if (status == 130)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 " (interrupted after %d of %d runs)", w->n, w->planned);
	if (v.knee >= 0) {
		char label[48];
		json_t *k = knee_json(w, &v);
		step_label(w, v.knee, label, sizeof(label));
		printf("knee: %s (%s)\n", label,
		       json_string_value(json_object_get(k, "why")));
		json_decref(k);
	}
	printf("%s\n", text);
	json_t *capacity = json_null();
	if (v.capacity >= 0) {
		capacity = value_json(w, v.capacity);
		for (int i = 0; i < w->n; i++)
			if (w->runs[i].pos == v.capacity)
				json_object_set_new(capacity, "achieved_rate",
					json_real(w->runs[i].achieved));
	}
	json_object_update_new(j, json_pack("{s:o, s:b, s:i, s:o, s:o, s:s}",
		"capacity", capacity, "monotonic", v.monotonic, "repeats",
		repeated ? o->repeat : 0, "noise", noisy,
		"knee", knee_json(w, &v), "verdict", text));
	return status;
}

/* What a search makes of run s. */
static enum search_outcome outcome(const struct sweep_run *s)
{
	if (s->meets)
		return SEARCH_MET;
	return s->cause == SWEEP_SENDER ? SEARCH_SENDER : SEARCH_MISSED;
}

/* The n searches' runs as the summary sees them, into t (room for w->n);
 * an interrupted run tells nothing. Returns how many. */
static int trials(const struct sweep *w, struct search_trial *t)
{
	int n = 0;
	for (int i = 0; i < w->n; i++)
		if (w->runs[i].cause != SWEEP_INTERRUPTED)
			t[n++] = (struct search_trial){ .search = w->runs[i].pos,
				.rate = w->runs[i].rate,
				.out = outcome(&w->runs[i]) };
	return n;
}

/* "p99.9 <= 2 ms, p50 <= 500 us" */
static void objectives(const struct opts *o, char *buf, size_t len)
{
	char name[24], us[48];
	buf[0] = 0;
	for (int i = 0; i < o->nslo; i++) {
		slo_name(&o->slo[i], name, sizeof(name));
		fmt_us(us, sizeof(us), o->slo[i].us);
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s <= %s",
			 i ? ", " : "", name, us);
	}
}

static json_t *rate_or_null(double rate)
{
	return rate > 0 ? json_real(rate) : json_null();
}

static json_t *interval_json(const struct search *s, int k)
{
	double ceiling = s->end == SEARCH_AT_TO ? s->to
			 : s->end == SEARCH_AT_SENDER ? s->ceiling : 0;
	return json_pack("{s:i, s:f, s:b, s:s, s:o, s:o, s:i, s:o, s:o}",
		"search", k, "start", s->start, "warm", s->warm,
		"end", search_end_name(s->end), "met", rate_or_null(s->met),
		"missed", rate_or_null(s->missed), "steps", s->steps,
		"ceiling", rate_or_null(ceiling), "ceiling_achieved",
		s->end == SEARCH_AT_SENDER ? json_real(s->sent) : json_null());
}

/* Every rate of the n trials t, how many of its runs met, printed and as
 * JSON; r has room for n. */
static json_t *rates_json(const struct search_trial *t, int n,
			  struct search_rate *r, FILE *out)
{
	json_t *all = json_array();
	int k = search_rates(t, n, r);
	fprintf(out, "rates:\n");
	for (int i = 0; i < k; i++) {
		fprintf(out, "%10.10g pps: %d of %d met\n", r[i].rate, r[i].met,
			r[i].runs);
		json_array_append_new(all, json_pack("{s:f, s:i, s:i, s:f}",
			"target_rate", r[i].rate, "runs", r[i].runs, "met",
			r[i].met, "fraction_met", (double)r[i].met / r[i].runs));
	}
	return all;
}

static json_t *trial_json(const struct search_trial *t)
{
	return json_pack("{s:i, s:f}", "search", t->search, "target_rate",
			 t->rate);
}

/* The trials that missed below one that met, printed; null when none.
 * bad has room for n. */
static json_t *nonmonotonic_json(const struct search_trial *t, int n,
				 int *bad, FILE *out)
{
	int top, k = search_nonmonotonic(t, n, bad, &top);
	json_t *j = json_null();
	if (k) {
		json_t *missed = json_array();
		fprintf(out, "not monotonic: %.10g pps met (search %d) above",
			t[top].rate, t[top].search);
		for (int i = 0; i < k; i++) {
			fprintf(out, "%s %.10g pps missed (search %d)", i ? "," : "",
				t[bad[i]].rate, t[bad[i]].search);
			json_array_append_new(missed, trial_json(&t[bad[i]]));
		}
		fputc('\n', out);
		j = json_pack("{s:o, s:o}", "met", trial_json(&t[top]),
			      "missed_below", missed);
	}
	return j;
}

/* The searches' capacity as independent repeats (search_summarize): the
 * median with the interval over them, or, unstable, the interval of those
 * that found one and the fraction that did, and no median; null when none
 * found one or none ended. */
static json_t *capacity_json(const struct search *s, int n)
{
	struct search_summary m;
	search_summarize(s, n, &m);
	if (!m.found)
		return json_null();
	return json_pack("{s:o, s:f, s:f, s:i, s:i, s:b, s:f, s:f, s:b}",
		"target_rate", rate_or_null(m.median), "min_rate", m.min,
		"max_rate", m.max, "searches", m.n, "found", m.found,
		"unstable", m.unstable, "fraction_found",
		(double)m.found / m.n, "confidence", m.confidence,
		"at_least", m.at_least);
}

/* --searches searches, one after the other, each to its end and each
 * from the same start (--from, or warm at --start): independent repeats,
 * none started from what another found. Then every rate's runs, the rates
 * that missed below one that met and the verdict, printed and their keys
 * added to j. Returns as one does. */
static int searches(struct sweep *w, json_t *j, char *err, size_t errlen)
{
	const struct opts *o = w->o;
	struct search s[SEARCH_MAX];
	int status = 0, k = 0;
	search_header(stdout, o);
	for (; k < o->searches && !status; k++) {
		struct search *c = &s[k];
		if (o->start > 0)
			search_start_warm(c, o->from, o->to, o->resolution_pct,
					  o->start);
		else
			search_start(c, o->from, o->to, o->resolution_pct);
		while (c->end == SEARCH_RUNNING && !status) {
			if (w->n)
				pause_ms(o->pause_ms);
			if (o->progress)
				fprintf(stderr, "loadgen sweep: search %d of %d, "
					"step %d: %.10g pps\n", k + 1,
					o->searches, c->steps + 1, c->rate);
			status = one(w, c->rate, o->quota_pct, k + 1, k + 1,
				     json_pack("{s:i, s:f}", "search", k + 1,
					       "target_rate", c->rate),
				     err, errlen);
			if (!status)
				search_step(c, outcome(&w->runs[w->n - 1]),
					    w->runs[w->n - 1].achieved);
		}
		if (status == 130)
			c->end = SEARCH_STOPPED;
		if (!status || status == 130) {
			char text[256];
			search_text(c, text, sizeof(text));
			printf("search %d: %s\n", k + 1, text);
		}
	}
	if (status && status != 130)
		return status;
	/* a trial, a rate and a miss below a met rate at most per run */
	struct search_trial *t = calloc((size_t)w->n + 1, sizeof(*t));
	struct search_rate *r = calloc((size_t)w->n + 1, sizeof(*r));
	int *below = calloc((size_t)w->n + 1, sizeof(*below));
	if (!t || !r || !below) {
		free(t);
		free(r);
		free(below);
		snprintf(err, errlen, "out of memory");
		return EX_OSERR;
	}
	int nt = trials(w, t);
	json_t *intervals = json_array();
	for (int i = 0; i < k; i++)
		json_array_append_new(intervals, interval_json(&s[i], i + 1));
	json_t *rates = rates_json(t, nt, r, stdout);
	json_t *bad = nonmonotonic_json(t, nt, below, stdout);
	char slo[256], text[1024];
	objectives(o, slo, sizeof(slo));
	search_verdict(s, k, json_is_null(bad), slo, text, sizeof(text));
	if (status == 130)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
			 " (interrupted in search %d of %d)", k, o->searches);
	printf("%s\n", text);
	json_object_update_new(j, json_pack("{s:f, s:f, s:f, s:i, s:o, s:o, "
					    "s:o, s:b, s:o, s:s}",
		"from", o->from, "to", o->to, "resolution_pct",
		o->resolution_pct, "searches", o->searches, "intervals",
		intervals, "rates", rates, "capacity", capacity_json(s, k),
		"monotonic", json_is_null(bad), "nonmonotonic", bad,
		"verdict", text));
	free(t);
	free(r);
	free(below);
	return status;
}

int sweep_run(const struct opts *o, char *err, size_t errlen)
{
	struct sweep w = { .o = o, .by_quota = o->sweep == OPTS_SWEEP_QUOTA,
			   .steps = json_array(), .planned = o->steps,
			   .t0 = now_s() };
	json_t *slo = json_object();
	for (int i = 0; i < o->nslo; i++)
		json_object_set_new(slo, o->slo[i].name,
				    json_integer(o->slo[i].us));
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o}", "tool",
		"loadgen sweep", "target", o->target_text, "mode", o->search
		? "search" : w.by_quota ? "quota" : "rate", "slo", slo,
		"steps", w.steps);
	if (o->csv) {
		if (newfile_open(&w.csv_file, o->csv, err, errlen) == 0)
			w.csv = newfile_stream(&w.csv_file, err, errlen);
		if (!w.csv) {
			json_decref(j);
			return EX_CANTCREAT;
		}
		fprintf(w.csv, "target_rate,cpu_quota_pct,achieved_rate,p50_us,"
			"p90_us,p99_us,p99_9_us,p99_99_us,max_us,sent,lost,"
			"nr_throttled,throttled_us,meets_slo,%s\n",
			o->search ? "search" : "pass");
	}
	int status = o->search ? searches(&w, j, err, errlen)
			       : steps(&w, j, err, errlen);
	/* the rows of the runs done are kept, also after a failure */
	bool failed = status && status != 130;
	if (w.csv && newfile_commit(&w.csv_file, w.csv, err,
				    status ? 0 : errlen) < 0 && !status)
		status = EX_CANTCREAT;
	if (o->json && !failed &&
	    output_write_json(o->json, j, err, errlen) < 0 && !status)
		status = EX_CANTCREAT;
	json_decref(j);
	free(w.runs);
	return status;
}
