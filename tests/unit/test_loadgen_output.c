/* Unit tests for loadgen's output: the summary table against a fixture,
 * the JSON schema that scripts rely on (every key, its type, the
 * percentile objects of docs/formats.md, reals to 10 digits), the hgrm
 * file names and the time series CSV (windows by reply time, empty
 * windows, comments). */
#include "check.h"
#include "../../loadgen/output.h"
#include "../../loadgen/series.h"
#include "../../loadgen/sweep.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fill(struct opts *o, struct run_result *r)
{
	char why[256];
	memset(o, 0, sizeof(*o));
	memset(r, 0, sizeof(*r));
	addr_parse(&o->target, "udp://127.0.0.1:9000", 0, why, sizeof(why));
	snprintf(o->target_text, sizeof(o->target_text), "udp://127.0.0.1:9000");
	o->threads = 2;
	o->flows = 4;
	o->size = 64;
	o->timeout_ms = 2000;
	r->target_rate = 20000;
	r->achieved_rate = 19000;
	r->rate_ok = false;
	r->duration_s = 10;
	r->send_span_s = 10.5;
	r->elapsed_s = 11;
	r->expected = 200000;
	r->sent = 199990;
	r->received = 199980;
	r->lost = 10;
	r->duplicated = 1;
	r->reordered = 2;
	r->late = 3;
	r->foreign = 4;
	hist_init_us(&r->corrected);
	hist_init_us(&r->uncorrected);
	hist_init_us(&r->sched_err);
	for (int64_t v = 1; v <= 10000; v++) {
		hist_record(&r->corrected, v * 20);
		hist_record(&r->uncorrected, v);
		hist_record(&r->sched_err, v % 50);
	}
	snprintf(r->cgroup.path, sizeof(r->cgroup.path),
		 "/sys/fs/cgroup/relay-loadgen-1");
	r->cgroup.version = 2;
	r->cgroup.quota_us = 20000;
	r->cgroup.period_us = 100000;
	r->cgroup.stat.nr_periods = 110;
	r->cgroup.stat.nr_throttled = 95;
	r->cgroup.stat.throttled_us = 7600000;
	r->cpu_user_s = 0.5;
	r->cpu_sys_s = 1.25;
}

static char *slurp(const char *path, size_t *n)
{
	static char buf[1 << 16];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	*n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[*n] = 0;
	fclose(f);
	return buf;
}

static void test_table(void)
{
	struct opts o;
	struct run_result r;
	fill(&o, &r);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	output_table(mem, &o, &r);
	fclose(mem);
	if (getenv("LOADGEN_WRITE_FIXTURE"))
		fputs(buf, stdout);
	size_t n;
	const char *want = slurp(check_fixture("loadgen/table.txt"), &n);
	CHECK(want != NULL);
	if (want) {
		CHECK_EQ_INT(len, n);
		CHECK(strcmp(buf, want) == 0);
	}
	free(buf);
	run_result_free(&r);
}

static void check_pct(json_t *p, uint64_t count)
{
	CHECK(json_is_object(p));
	for (int i = 0; i < 6; i++)
		CHECK(json_is_integer(json_object_get(p, output_pct_keys[i])));
	CHECK(json_is_real(json_object_get(p, "mean")));
	CHECK_EQ_INT(json_integer_value(json_object_get(p, "count")), count);
	/* percentiles never go down */
	for (int i = 1; i < 6; i++)
		CHECK(json_integer_value(json_object_get(p, output_pct_keys[i])) >=
		      json_integer_value(json_object_get(p, output_pct_keys[i - 1])));
}

static void test_json_schema(void)
{
	struct opts o;
	struct run_result r;
	fill(&o, &r);
	json_t *j = output_json(&o, &r);
	const char *reals[] = { "target_rate", "achieved_rate",
		"rate_shortfall_pct", "duration_s", "send_span_s", "elapsed_s" };
	const char *ints[] = { "sent", "received", "lost", "duplicated",
		"reordered", "late", "foreign", "send_errors", "refused",
		"expected", "threads", "flows", "size", "timeout_ms", "spin_us" };
	for (size_t i = 0; i < sizeof(reals) / sizeof(*reals); i++)
		CHECK(json_is_real(json_object_get(j, reals[i])));
	for (size_t i = 0; i < sizeof(ints) / sizeof(*ints); i++)
		CHECK(json_is_integer(json_object_get(j, ints[i])));
	CHECK(json_is_false(json_object_get(j, "rate_ok")));
	CHECK(json_is_false(json_object_get(j, "interrupted")));
	CHECK(json_is_string(json_object_get(j, "target")));
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "lost")), 10);
	double short_pct = json_real_value(json_object_get(j, "rate_shortfall_pct"));
	CHECK(short_pct > 4.99 && short_pct < 5.01);

	json_t *lat = json_object_get(j, "latency_us");
	check_pct(json_object_get(lat, "corrected"), 10000);
	check_pct(json_object_get(lat, "uncorrected"), 10000);
	check_pct(json_object_get(j, "schedule_error_us"), 10000);
	CHECK_EQ_INT(json_integer_value(json_object_get(
		json_object_get(lat, "corrected"), "max")), 200063);

	json_t *cg = json_object_get(j, "cgroup");
	CHECK(json_is_string(json_object_get(cg, "path")));
	const char *cgk[] = { "quota_us", "period_us", "nr_periods",
		"nr_throttled", "throttled_us", "usage_us", "version" };
	for (size_t i = 0; i < sizeof(cgk) / sizeof(*cgk); i++)
		CHECK(json_is_integer(json_object_get(cg, cgk[i])));
	CHECK_EQ_INT(json_integer_value(json_object_get(cg, "nr_throttled")), 95);
	CHECK_EQ_INT(json_integer_value(json_object_get(cg, "throttled_us")),
		     7600000);
	json_decref(j);

	/* without a quota the keys stay, with null path and -1 quota */
	r.cgroup.path[0] = 0;
	memset(&r.cgroup.stat, 0, sizeof(r.cgroup.stat));
	j = output_json(&o, &r);
	cg = json_object_get(j, "cgroup");
	CHECK(json_is_null(json_object_get(cg, "path")));
	CHECK_EQ_INT(json_integer_value(json_object_get(cg, "quota_us")), -1);
	CHECK(json_is_integer(json_object_get(cg, "nr_throttled")));
	json_decref(j);
	run_result_free(&r);
}

/* --list-over-us: the threads' lists merged in intended order, what did
 * not fit counted; the JSON has them as seconds on CLOCK_MONOTONIC, and
 * null without the flag. */
static void test_listed(void)
{
	struct slow a, b, all;
	CHECK_EQ_INT(slow_init(&a, 2), 0);
	CHECK_EQ_INT(slow_init(&b, 2), 0);
	CHECK_EQ_INT(slow_init(&all, 4), 0);
	slow_add(&a, 3000000000LL, 3250000000LL);
	slow_add(&b, 1000000000LL, 1002000000LL);
	slow_add(&a, 5000000000LL, 5000500000LL);
	slow_add(&a, 6000000000LL, 6000500000LL);	/* no room: dropped */
	slow_merge(&all, &a);
	slow_merge(&all, &b);
	CHECK_EQ_INT(all.n, 3);
	CHECK_EQ_INT(all.dropped, 1);
	CHECK_EQ_INT(all.v[0].intended_ns, 1000000000LL);
	CHECK_EQ_INT(all.v[2].intended_ns, 5000000000LL);

	struct opts o;
	struct run_result r;
	fill(&o, &r);
	json_t *j = output_json(&o, &r);
	CHECK(json_is_null(json_object_get(j, "listed")));
	json_decref(j);
	o.list_over_us = 150;
	r.slow = all;
	j = output_json(&o, &r);
	json_t *l = json_object_get(j, "listed");
	CHECK_EQ_INT(json_integer_value(json_object_get(l, "over_us")), 150);
	CHECK(json_is_false(json_object_get(l, "complete")));
	CHECK_EQ_INT(json_integer_value(json_object_get(l, "dropped")), 1);
	json_t *d = json_object_get(l, "datagrams");
	CHECK_EQ_INT(json_array_size(d), 3);
	json_t *first = json_array_get(d, 0);
	CHECK(json_real_value(json_object_get(first, "intended_mono_s")) == 1.0);
	CHECK(json_real_value(json_object_get(first, "reply_mono_s")) == 1.002);
	json_decref(j);
	run_result_free(&r);
	slow_free(&a);
	slow_free(&b);
}

static void test_paths(void)
{
	char out[256];
	output_uncorrected_path("res/stock.hgrm", out, sizeof(out));
	CHECK(strcmp(out, "res/stock.uncorrected.hgrm") == 0);
	output_uncorrected_path("lat", out, sizeof(out));
	CHECK(strcmp(out, "lat.uncorrected") == 0);
}

/* Reals are written with 10 significant digits: 45.9, not
 * 45.899999999999999; seconds keep their microseconds. */
static void test_json_digits(void)
{
	char path[] = "/tmp/test_loadgen_output.XXXXXX";
	char err[256];
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	json_t *j = json_pack("{s:f, s:f}", "mean", 45.9, "elapsed_s", 1.032440676);
	CHECK_EQ_INT(output_write_json(path, j, err, sizeof(err)), 0);
	json_decref(j);
	size_t n;
	const char *text = slurp(path, &n);
	CHECK(text && strstr(text, "\"mean\": 45.9\n"));
	CHECK(text && strstr(text, "\"elapsed_s\": 1.032440676,"));
	unlink(path);
}

static void test_series(void)
{
	struct series s;
	struct series_local a, b;
	const int64_t ms = 1000000;
	CHECK(series_init(&s, 1000 * ms, 100 * ms, 2) == 0);
	CHECK(series_local_init(&a, &s, 0) == 0);
	CHECK(series_local_init(&b, &s, 1) == 0);
	series_record(&a, 1010 * ms, 40);
	series_record(&b, 1050 * ms, 60);
	series_record(&a, 1150 * ms, 100);
	/* nothing in the third window; a 200 ms stall ends in the fourth */
	series_record(&b, 1350 * ms, 200000);
	series_record(&a, 1360 * ms, 150000);
	series_finish(&a);
	series_finish(&b);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	CHECK(series_write_csv(&s, mem, "one\ntwo", 1450 * ms) == 0);
	fclose(mem);
	const char *want =
		"# one\n# two\n"
		"t_s,count,p50_us,p99_us,max_us\n"
		"0.100,2,40,60,60\n"
		"0.200,1,100,100,100\n"
		"0.300,0,,,\n"
		"0.400,2,150527,200703,200703\n"
		"0.500,0,,,\n";
	if (strcmp(buf, want) != 0)
		fprintf(stderr, "got:\n%s", buf);
	CHECK(strcmp(buf, want) == 0);
	free(buf);
	series_local_free(&a);
	series_local_free(&b);
	series_free(&s);
}

/* Step values and the SLO verdict: every objective, the rate rule (1 %)
 * and the loss rule (none lost) each decide on their own. */
static bool meets(const struct opts *o, const struct run_result *r)
{
	struct sweep_run s;
	sweep_judge_run(o, r, 0, &s);
	return s.meets;
}

static void test_sweep_rules(void)
{
	struct opts o;
	struct run_result r;
	fill(&o, &r);
	o.from = 10000;
	o.to = 50000;
	o.steps = 5;
	CHECK(sweep_value(&o, 0) == 10000 && sweep_value(&o, 4) == 50000);
	CHECK(sweep_value(&o, 2) == 30000);
	o.steps = 1;
	CHECK(sweep_value(&o, 0) == 10000);

	o.nslo = opts_parse_slo("p50=150ms,max=250ms", o.slo, OPTS_MAX_SLO);
	CHECK_EQ_INT(o.nslo, 2);
	r.rate_ok = true;
	r.lost = 0;
	CHECK(meets(&o, &r));
	r.lost = 1;			/* one datagram of 199990 */
	CHECK(!meets(&o, &r));
	r.lost = 0;
	r.rate_ok = false;
	CHECK(!meets(&o, &r));
	r.rate_ok = true;
	o.slo[1].us = 200000;		/* max 200.063 ms misses 200 ms */
	CHECK(!meets(&o, &r));
	o.slo[1].us = 250000;
	o.slo[0].us = 100000;		/* p50 100.031 ms misses 100 ms */
	CHECK(!meets(&o, &r));
	run_result_free(&r);
}

int main(void)
{
	test_sweep_rules();
	test_table();
	test_json_schema();
	test_listed();
	test_paths();
	test_json_digits();
	test_series();
	return check_done();
}
