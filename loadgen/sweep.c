/* sweep: a series of runs and the SLO verdict over them. */
#include "sweep.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>

#include "output.h"

double sweep_value(const struct opts *o, int i)
{
	if (o->steps <= 1)
		return o->from;
	return o->from + (o->to - o->from) * i / (o->steps - 1);
}

bool sweep_meets(const struct opts *o, const struct run_result *r)
{
	if (!r->rate_ok || r->sent == 0 || r->lost * 1000 > r->sent)
		return false;
	for (int i = 0; i < o->nslo; i++)
		if (hist_percentile(&r->corrected, o->slo[i].pct) > o->slo[i].us)
			return false;
	return true;
}

static void row(FILE *out, double rate, double quota,
		const struct run_result *r, bool meets)
{
	char q[32] = "-";
	if (quota >= 0)
		snprintf(q, sizeof(q), "%.1f%%", quota);
	fprintf(out, "%10.0f %7s %10.0f %9lld %9lld %9lld %9lld %8llu %6llu  %s\n",
		rate, q, r->achieved_rate,
		(long long)hist_percentile(&r->corrected, 50),
		(long long)hist_percentile(&r->corrected, 99),
		(long long)hist_percentile(&r->corrected, 99.9),
		(long long)hist_max(&r->corrected),
		(unsigned long long)r->lost,
		(unsigned long long)r->cgroup.stat.nr_throttled,
		meets ? "yes" : "no");
}

static void csv_row(FILE *f, double rate, double quota,
		    const struct run_result *r, bool meets)
{
	fprintf(f, "%.3f,", rate);
	if (quota >= 0)
		fprintf(f, "%.3f", quota);
	fprintf(f, ",%.3f", r->achieved_rate);
	for (int i = 0; i < 6; i++)
		fprintf(f, ",%lld", (long long)hist_percentile(&r->corrected,
							      output_pcts[i]));
	fprintf(f, ",%llu,%llu,%llu,%llu,%d\n", (unsigned long long)r->sent,
		(unsigned long long)r->lost,
		(unsigned long long)r->cgroup.stat.nr_throttled,
		(unsigned long long)r->cgroup.stat.throttled_us, meets);
}

static void pause_ms(int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

int sweep_run(const struct opts *o, char *err, size_t errlen)
{
	bool by_quota = o->sweep == OPTS_SWEEP_QUOTA;
	json_t *steps = json_array(), *slo = json_object(), *best = json_null();
	FILE *csv = NULL;
	int status = 0;

	for (int i = 0; i < o->nslo; i++)
		json_object_set_new(slo, o->slo[i].name,
				    json_integer(o->slo[i].us));
	if (o->csv) {
		csv = fopen(o->csv, "w");
		if (!csv) {
			snprintf(err, errlen, "cannot write %s: %s", o->csv,
				 strerror(errno));
			json_decref(steps);
			json_decref(slo);
			return EX_CANTCREAT;
		}
		fprintf(csv, "target_rate,quota_pct,achieved_rate,p50_us,p90_us,"
			"p99_us,p99_9_us,p99_99_us,max_us,sent,lost,"
			"nr_throttled,throttled_us,meets_slo\n");
	}
	printf("%10s %7s %10s %9s %9s %9s %9s %8s %6s  %s\n", "rate", "quota",
	       "achieved", "p50_us", "p99_us", "p99.9_us", "max_us", "lost",
	       "thrtl", "slo");
	for (int i = 0; i < o->steps && !status; i++) {
		double v = sweep_value(o, i);
		double rate = by_quota ? o->rate : v;
		double quota = by_quota ? v : o->quota_pct;
		struct run_result r;
		status = run_once(o, rate, quota, &r, err, errlen);
		if (status && status != 130) {
			run_result_free(&r);
			break;
		}
		bool meets = !r.interrupted && sweep_meets(o, &r);
		row(stdout, rate, quota, &r, meets);
		fflush(stdout);
		if (csv)
			csv_row(csv, rate, quota, &r, meets);
		json_t *res = output_json(o, &r);
		json_array_append_new(steps, json_pack("{s:f, s:o, s:b, s:o}",
			"target_rate", rate,
			"quota_pct", quota >= 0 ? json_real(quota) : json_null(),
			"meets_slo", meets, "result", res));
		/* rates rise: the last one meeting wins; quotas: the first */
		if (meets && (!by_quota || json_is_null(best))) {
			json_decref(best);
			best = json_pack("{s:f, s:o, s:f}", "target_rate", rate,
				"quota_pct", quota >= 0 ? json_real(quota)
							: json_null(),
				"achieved_rate", r.achieved_rate);
		}
		run_result_free(&r);
		if (!status && i + 1 < o->steps)
			pause_ms(o->pause_ms);
	}
	if (json_is_null(best))
		printf("no step met the SLO\n");
	else if (by_quota)
		printf("lowest quota meeting the SLO at %.0f pps: %.1f%%\n",
		       o->rate, json_real_value(json_object_get(best, "quota_pct")));
	else
		printf("highest rate meeting the SLO: %.0f pps\n",
		       json_real_value(json_object_get(best, "target_rate")));
	if (csv && fclose(csv) != 0 && !status) {
		snprintf(err, errlen, "cannot write %s", o->csv);
		status = EX_CANTCREAT;
	}
	if (o->json) {
		json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}",
			"tool", "loadgen sweep", "target", o->target_text,
			"mode", by_quota ? "quota" : "rate", "slo", slo,
			"steps", steps, "best", best);
		if (output_write_json(o->json, j, err, errlen) < 0 && !status)
			status = EX_CANTCREAT;
		json_decref(j);
	} else {
		json_decref(steps);
		json_decref(slo);
		json_decref(best);
	}
	return status;
}
