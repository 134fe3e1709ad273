/* output: tables, JSON and result files of a run. */
#include "output.h"

#include <errno.h>
#include <string.h>

#include "hlog.h"
#include "newfile.h"
#include "results.h"

const double output_pcts[6] = { 50, 90, 99, 99.9, 99.99, 100 };
const char *const output_pct_keys[6] = {
	"p50", "p90", "p99", "p99_9", "p99_99", "max"
};

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

void output_table(FILE *out, const struct opts *o, const struct run_result *r)
{
	fprintf(out, "target %s, %d thread%s, %d flow%s, %d-byte datagrams\n",
		o->target_text, o->threads, o->threads == 1 ? "" : "s",
		o->flows, o->flows == 1 ? "" : "s", o->size);
	fprintf(out, "rate: target %.0f pps, achieved %.0f pps (%+.2f%%)%s\n",
		r->target_rate, r->achieved_rate,
		r->target_rate > 0 ? (r->achieved_rate / r->target_rate - 1) * 100
				   : 0.0,
		r->rate_ok ? "" : "  ** BELOW TARGET **");
	fprintf(out, "packets: sent %llu of %llu, received %llu, lost %llu, "
		"duplicated %llu, reordered %llu, late %llu, foreign %llu",
		(unsigned long long)r->sent, (unsigned long long)r->expected,
		(unsigned long long)r->received, (unsigned long long)r->lost,
		(unsigned long long)r->duplicated,
		(unsigned long long)r->reordered, (unsigned long long)r->late,
		(unsigned long long)r->foreign);
	if (r->send_errors || r->refused)
		fprintf(out, ", send errors %llu, refused %llu",
			(unsigned long long)r->send_errors,
			(unsigned long long)r->refused);
	fprintf(out, "\n\n  Latency (us)   corrected  uncorrected\n");
	for (int i = 0; i < 6; i++)
		fprintf(out, "  %8.3f%%  %12lld %12lld\n", output_pcts[i],
			(long long)hist_percentile(&r->corrected, output_pcts[i]),
			(long long)hist_percentile(&r->uncorrected,
						   output_pcts[i]));
	fprintf(out, "  %9s  %12.1f %12.1f\n", "mean", hist_mean(&r->corrected),
		hist_mean(&r->uncorrected));
	fprintf(out, "\nschedule error (actual - intended send, us): p50 %lld, "
		"p99 %lld, p99.9 %lld, max %lld",
		(long long)hist_percentile(&r->sched_err, 50),
		(long long)hist_percentile(&r->sched_err, 99),
		(long long)hist_percentile(&r->sched_err, 99.9),
		(long long)hist_max(&r->sched_err));
	if (o->spin_us)
		fprintf(out, " (spinning %d us before each send)", o->spin_us);
	fputc('\n', out);
	if (r->cgroup.path[0]) {
		fprintf(out, "cgroup %s (v%d, %s): quota ", r->cgroup.path,
			r->cgroup.version,
			r->cgroup.threads_only ? "sender threads" : "process");
		if (r->cgroup.quota_us < 0)
			fprintf(out, "none");
		else
			fprintf(out, "%lld us per %lld us",
				(long long)r->cgroup.quota_us,
				(long long)r->cgroup.period_us);
		fprintf(out, "; throttled in %llu of %llu periods, %.1f ms "
			"in all\n",
			(unsigned long long)r->cgroup.stat.nr_throttled,
			(unsigned long long)r->cgroup.stat.nr_periods,
			(double)r->cgroup.stat.throttled_us / 1000.0);
	}
	if (r->watched.path[0])
		fprintf(out, "watched cgroup %s: throttled in %llu of %llu "
			"periods, %.1f ms in all\n", r->watched.path,
			(unsigned long long)r->watched.stat.nr_throttled,
			(unsigned long long)r->watched.stat.nr_periods,
			(double)r->watched.stat.throttled_us / 1000.0);
	fprintf(out, "cpu: user %.2f s, system %.2f s; interrupted: %s\n",
		r->cpu_user_s, r->cpu_sys_s, yes_no(r->interrupted));
}

static json_t *cgroup_json(const struct run_result *r)
{
	bool on = r->cgroup.path[0] != 0;
	const struct cg_stat *st = &r->cgroup.stat;
	return json_pack("{s:o, s:o, s:s?, s:I, s:I, s:I, s:I, s:I, s:I}",
		"path", on ? json_string(r->cgroup.path) : json_null(),
		"version", on ? json_integer(r->cgroup.version) : json_null(),
		"scope", on ? (r->cgroup.threads_only ? "threads" : "process")
			    : NULL,
		"quota_us", (json_int_t)(on ? r->cgroup.quota_us : -1),
		"period_us", (json_int_t)(on ? r->cgroup.period_us : 0),
		"nr_periods", (json_int_t)st->nr_periods,
		"nr_throttled", (json_int_t)st->nr_throttled,
		"throttled_us", (json_int_t)st->throttled_us,
		"usage_us", (json_int_t)st->usage_us);
}

/* --list-over-us: each slow reply's intended send and arrival, seconds
 * on CLOCK_MONOTONIC (as start_mono_s), in intended order. */
static json_t *listed_json(const struct opts *o, const struct run_result *r)
{
	json_t *each = json_array();
	for (size_t i = 0; i < r->slow.n; i++)
		json_array_append_new(each, json_pack("{s:f, s:f}",
			"intended_mono_s", (double)r->slow.v[i].intended_ns / 1e9,
			"reply_mono_s", (double)r->slow.v[i].reply_ns / 1e9));
	return json_pack("{s:i, s:b, s:I, s:o}", "over_us", o->list_over_us,
			 "complete", r->slow.dropped == 0,
			 "dropped", (json_int_t)r->slow.dropped, "datagrams", each);
}

json_t *output_json(const struct opts *o, const struct run_result *r)
{
	json_t *j = json_pack(
		"{s:s, s:s, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:i, s:i, s:i,"
		" s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b}",
		"tool", "loadgen",
		"target", o->target_text,
		"target_rate", r->target_rate,
		"achieved_rate", r->achieved_rate,
		"rate_ok", r->rate_ok,
		"rate_shortfall_pct", r->target_rate > 0 && !r->rate_ok
			? (1 - r->achieved_rate / r->target_rate) * 100 : 0.0,
		"duration_s", r->duration_s,
		"send_span_s", r->send_span_s,
		"elapsed_s", r->elapsed_s,
		"threads", o->threads,
		"flows", o->flows,
		"size", o->size,
		"expected", (json_int_t)r->expected,
		"sent", (json_int_t)r->sent,
		"received", (json_int_t)r->received,
		"lost", (json_int_t)r->lost,
		"duplicated", (json_int_t)r->duplicated,
		"reordered", (json_int_t)r->reordered,
		"late", (json_int_t)r->late,
		"foreign", (json_int_t)r->foreign,
		"send_errors", (json_int_t)r->send_errors,
		"refused", (json_int_t)r->refused,
		"interrupted", r->interrupted);
	/* Where the run lies on CLOCK_MONOTONIC, the clock of a kernel trace
	 * (trace_clock mono): what a step's trace window is cut by. */
	json_object_set_new(j, "start_mono_s", json_real((double)r->series.start_ns / 1e9));
	json_object_set_new(j, "timeout_ms", json_integer(o->timeout_ms));
	json_object_set_new(j, "spin_us", json_integer(o->spin_us));
	json_object_set_new(j, "latency_us", json_pack("{s:o, s:o}",
		"corrected", results_percentiles(&r->corrected),
		"uncorrected", results_percentiles(&r->uncorrected)));
	json_object_set_new(j, "schedule_error_us",
			    results_percentiles(&r->sched_err));
	json_object_set_new(j, "cgroup", cgroup_json(r));
	json_object_set_new(j, "rt_priority", json_integer(o->rt_prio));
	json_object_set_new(j, "listed", o->list_over_us ? listed_json(o, r) : json_null());
	json_object_set_new(j, "watched_cgroup", !r->watched.path[0]
		? json_null()
		: json_pack("{s:s, s:I, s:I, s:I, s:I}",
			"path", r->watched.path,
			"nr_periods", (json_int_t)r->watched.stat.nr_periods,
			"nr_throttled", (json_int_t)r->watched.stat.nr_throttled,
			"throttled_us", (json_int_t)r->watched.stat.throttled_us,
			"usage_us", (json_int_t)r->watched.stat.usage_us));
	json_object_set_new(j, "cpu", json_pack("{s:f, s:f}",
		"user_s", r->cpu_user_s, "sys_s", r->cpu_sys_s));
	return j;
}

static int put_json(FILE *f, const void *j)
{
	/* 10 digits: seconds keep microseconds up to 9999 s, and a mean of
	 * 45.9 prints as 45.9, not 45.899999999999999. */
	if (json_dumpf(j, f, JSON_INDENT(2) | JSON_SORT_KEYS |
		       JSON_REAL_PRECISION(10)) < 0)
		return -1;
	return fputc('\n', f) == EOF ? -1 : 0;
}

/* Every result file is written by newfile: loadgen runs as root for
 * --cpu-quota, in directories others may write, so no name is opened. */
int output_write_json(const char *path, json_t *j, char *err, size_t errlen)
{
	return newfile_write(path, put_json, j, err, errlen);
}

void output_uncorrected_path(const char *path, char *out, size_t len)
{
	size_t n = strlen(path);
	if (n > 5 && strcmp(path + n - 5, ".hgrm") == 0)
		snprintf(out, len, "%.*s.uncorrected.hgrm", (int)(n - 5), path);
	else
		snprintf(out, len, "%s.uncorrected", path);
}

struct series_file {
	const struct series *series;
	const char *header;
	int64_t end_ns;
};

static int put_series(FILE *f, const void *arg)
{
	const struct series_file *sf = arg;
	return series_write_csv(sf->series, f, sf->header, sf->end_ns);
}

int output_write_series(const char *path, const struct opts *o,
			const struct run_result *r, char *err, size_t errlen)
{
	char header[512];
	snprintf(header, sizeof(header),
		 "loadgen: corrected latency per %lld ms window (by reply time)\n"
		 "target %s, rate %.0f pps, duration %.3f s, threads %d",
		 (long long)o->window_ms, o->target_text, r->target_rate,
		 r->duration_s, o->threads);
	struct series_file sf = { &r->series, header, r->series_end_ns };
	return newfile_write(path, put_series, &sf, err, errlen);
}

struct hlog_file {
	const struct opts *o;
	const struct run_result *r;
};

static int put_hlog(FILE *f, const void *arg)
{
	const struct opts *o = ((const struct hlog_file *)arg)->o;
	const struct run_result *r = ((const struct hlog_file *)arg)->r;
	char text[512];
	snprintf(text, sizeof(text), "loadgen: latency in us, target %s, "
		 "rate %.0f pps, duration %.3f s, threads %d; Interval_Max in "
		 "ms", o->target_text, r->target_rate, r->duration_s,
		 o->threads);
	int rc = hlog_write_header(f, text, r->start_unix_s);
	/* A run stopped early still writes what it saw; the log itself
	 * says so, for whoever adds it up without the JSON beside it. */
	if (!rc && r->interrupted) {
		snprintf(text, sizeof(text), "stopped after %.3f of %.3f s",
			 r->send_span_s, r->duration_s);
		rc = hlog_write_interrupted(f, text);
	}
	/* One interval: the whole run, send span and drain. */
	if (!rc)
		rc = hlog_write_interval(f, NULL, 0.0, r->elapsed_s,
					 &r->corrected, 1000.0);
	if (!rc)
		rc = hlog_write_interval(f, "uncorrected", 0.0, r->elapsed_s,
					 &r->uncorrected, 1000.0);
	return rc;
}

int output_write_hlog(const char *path, const struct opts *o,
		      const struct run_result *r, char *err, size_t errlen)
{
	struct hlog_file hf = { o, r };
	return newfile_write(path, put_hlog, &hf, err, errlen);
}

int output_files(const struct opts *o, const struct run_result *r, char *err,
		 size_t errlen)
{
	int rc = 0;
	if (o->json) {
		json_t *j = output_json(o, r);
		rc |= output_write_json(o->json, j, err, errlen);
		json_decref(j);
	}
	if (o->hgrm) {
		char un[4096];
		output_uncorrected_path(o->hgrm, un, sizeof(un));
		rc |= results_write_hgrm(&r->corrected, o->hgrm, err, errlen);
		rc |= results_write_hgrm(&r->uncorrected, un, err, errlen);
	}
	if (o->hlog)
		rc |= output_write_hlog(o->hlog, o, r, err, errlen);
	if (o->timeseries && r->has_series)
		rc |= output_write_series(o->timeseries, o, r, err, errlen);
	return rc;
}
