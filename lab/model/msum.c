/*
 * msum: formatting only; every number comes from the model's histograms.
 */
#include "msum.h"

#include <errno.h>
#include <string.h>
#include <sys/utsname.h>

#include "results.h"

uint64_t msum_over(const struct hist *h, int64_t us)
{
	return hist_count(h) - hist_count_le(h, us);
}

static FILE *open_out(const char *dir, const char *name, const char *suffix,
		      char *path, size_t pathlen, char *err, size_t errlen)
{
	snprintf(path, pathlen, "%s/%s%s", dir, name, suffix);
	FILE *f = fopen(path, "w");
	if (!f)
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
	return f;
}

static int close_out(FILE *f, int wrote, const char *path, char *err,
		     size_t errlen)
{
	if (fclose(f) != 0 || wrote != 0) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int msum_write_variant(const char *dir, const struct model_params *p,
		       const struct model_result *r, char *err, size_t errlen)
{
	const char *name = rlock_name(r->kind);
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s.hgrm", dir, name);
	if (results_write_hgrm(&r->waits, path, err, errlen) != 0)
		return -1;

	FILE *f = open_out(dir, name, ".timeseries.csv", path, sizeof(path),
			   err, errlen);
	if (!f)
		return -1;
	char comment[512];
	snprintf(comment, sizeof(comment),
		 "epmodel %s: RT consumer's wait for the lock, every %lld us\n"
		 "cpu.max %lld %lld, %d producers holding it %lld us, CPU %d; "
		 "a wait counts in the window it began in",
		 name, (long long)p->tick_us,
		 (long long)cg_quota_us(p->cpu_quota_pct, p->period_us),
		 (long long)p->period_us, p->producers, (long long)p->hold_us,
		 p->cpu);
	if (close_out(f, mseries_write_csv(&r->series, f, comment), path, err,
		      errlen) != 0)
		return -1;

	f = open_out(dir, name, ".events.csv", path, sizeof(path), err, errlen);
	if (!f)
		return -1;
	snprintf(comment, sizeof(comment),
		 "epmodel %s: every wait of the RT consumer over %d ms, from "
		 "when it began", name, MODEL_STALL_US / 1000);
	return close_out(f, mseries_write_events(&r->series, f, comment), path,
			 err, errlen);
}

static const struct model_result *find(const struct model_result *rs, int n,
				       enum rlock_kind kind)
{
	for (int i = 0; i < n; i++)
		if (rs[i].kind == kind)
			return &rs[i];
	return NULL;
}

void msum_verdict(char *buf, size_t len, const struct model_result *rs, int n)
{
	size_t used = (size_t)snprintf(buf, len, "worst wait:");
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s %s %.3f ms",
					 i ? "," : "", rlock_name(rs[i].kind),
					 (double)hist_max(&rs[i].waits) / 1000.0);
	if (used >= len)
		return;

	const struct model_result *rw = find(rs, n, RLOCK_RWLOCK);
	const struct model_result *pi = find(rs, n, RLOCK_PI_MUTEX);
	if (!rw || !pi) {
		snprintf(buf + used, len - used,
			 " (run both rwlock and pi_mutex to compare them)");
		return;
	}
	int64_t pi_max = hist_max(&pi->waits);
	double ratio = (double)hist_max(&rw->waits) / (double)(pi_max ? pi_max : 1);
	bool separated = msum_over(&rw->waits, MODEL_STALL_US) > 0 &&
			 msum_over(&pi->waits, MSUM_PI_LIMIT_US) == 0;
	snprintf(buf + used, len - used, "; rwlock/pi_mutex %.0fx: %s", ratio,
		 separated ?
		 "the PI lock boosts the throttled producer, the rwlock waits "
		 "out its quota" :
		 "no clear separation on this host");
}

json_t *msum_json(const struct model_params *p, int cgroup_version,
		  const struct model_result *rs, int n, const char *verdict)
{
	struct utsname u;
	if (uname(&u) != 0)
		strcpy(u.release, "unknown");
	json_t *root = json_object();
	for (int i = 0; i < n; i++) {
		const struct model_result *r = &rs[i];
		const char *name = rlock_name(r->kind);
		char hgrm[64], csv[64], events[64];
		snprintf(hgrm, sizeof(hgrm), "%s.hgrm", name);
		snprintf(csv, sizeof(csv), "%s.timeseries.csv", name);
		snprintf(events, sizeof(events), "%s.events.csv", name);
		json_t *v = json_pack(
			"{s:I, s:I, s:I, s:o, s:I, s:f, s:b, s:{s:s, s:s, s:s}}",
			"waits", (json_int_t)hist_count(&r->waits),
			"waits_over_20ms",
			(json_int_t)msum_over(&r->waits, MSUM_PI_LIMIT_US),
			"waits_over_50ms",
			(json_int_t)msum_over(&r->waits, MODEL_STALL_US),
			"wait_us", results_percentiles(&r->waits),
			"sections", (json_int_t)r->sections,
			"elapsed_s", (double)r->elapsed_ns / 1e9,
			"interrupted", r->signo != 0,
			"files", "hgrm", hgrm, "timeseries", csv,
			"events", events);
		json_object_set_new(v, "throttling", r->cg_stat_ok ?
			json_pack("{s:I, s:I, s:I}",
				  "nr_periods", (json_int_t)r->cg.nr_periods,
				  "nr_throttled", (json_int_t)r->cg.nr_throttled,
				  "throttled_us", (json_int_t)r->cg.throttled_us) :
			json_null());
		json_object_set_new(root, name, v);
	}
	json_t *params = json_pack("{s:s, s:s}", "tool", "epmodel",
				   "kernel", u.release);
#define MSUM_PARAM(name, min, max, def, arg, spec, help) \
	json_object_set_new(params, #name, json_integer(p->name));
	MODEL_PARAMS(MSUM_PARAM)
#undef MSUM_PARAM
	json_object_set_new(params, "quota_us",
			    json_integer(cg_quota_us(p->cpu_quota_pct,
						     p->period_us)));
	json_object_set_new(params, "cgroup_version", json_integer(cgroup_version));
	json_object_set_new(root, "params", params);
	json_object_set_new(root, "verdict", json_string(verdict));
	return root;
}

int msum_write_json(const char *dir, json_t *summary, char *err, size_t errlen)
{
	char path[4200];
	FILE *f = open_out(dir, "summary", ".json", path, sizeof(path), err,
			   errlen);
	if (!f)
		return -1;
	int wrote = json_dumpf(summary, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			      JSON_REAL_PRECISION(10));
	if (wrote == 0 && fputc('\n', f) == EOF)
		wrote = -1;
	return close_out(f, wrote, path, err, errlen);
}

void msum_table(FILE *out, const struct model_result *rs, int n,
		const char *verdict)
{
	fprintf(out, "%-9s %7s %6s %9s %9s %9s %9s %11s\n", "lock", "waits",
		">50ms", "p50 ms", "p99 ms", "p99.9 ms", "max ms", "throttled");
	for (int i = 0; i < n; i++) {
		const struct hist *h = &rs[i].waits;
		char thr[32] = "-";
		if (rs[i].cg_stat_ok)
			snprintf(thr, sizeof(thr), "%llu/%llu",
				 (unsigned long long)rs[i].cg.nr_throttled,
				 (unsigned long long)rs[i].cg.nr_periods);
		fprintf(out, "%-9s %7llu %6llu %9.3f %9.3f %9.3f %9.3f %11s\n",
			rlock_name(rs[i].kind),
			(unsigned long long)hist_count(h),
			(unsigned long long)msum_over(h, MODEL_STALL_US),
			(double)hist_percentile(h, 50.0) / 1000.0,
			(double)hist_percentile(h, 99.0) / 1000.0,
			(double)hist_percentile(h, 99.9) / 1000.0,
			(double)hist_max(h) / 1000.0, thr);
	}
	fprintf(out, "%s\n", verdict);
}
