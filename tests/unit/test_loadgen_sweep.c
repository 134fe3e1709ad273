/* Unit tests for loadgen sweep's verdict: objectives given over several
 * --slo flags (and --search's own flags), a run judged against them, the
 * rate and the loss rule, the cause of a miss, and the capacity of a sweep
 * that is not monotonic (a step that failed below one that met), with the
 * repeats counted. */
#include "check.h"
#include "../../loadgen/opts.h"
#include "../../loadgen/sweep.h"

#include <string.h>

static int parse(struct opts *o, const char *line)
{
	char buf[1024], err[512], *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "loadgen sweep --target udp://127.0.0.1:9 %s",
		 line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	opts_defaults(o);
	int rc = opts_parse(o, argc, argv, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "(%s)\n", err);
	return rc;
}

static void test_flags(void)
{
	struct opts o;
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99.9=1ms "
		    "--slo p99=500us,max=20ms") == 0);
	CHECK_EQ_INT(o.nslo, 3);
	CHECK(strcmp(o.slo[0].name, "p99_9") == 0 && o.slo[0].us == 1000);
	CHECK(strcmp(o.slo[1].name, "p99") == 0 && o.slo[1].us == 500);
	CHECK(strcmp(o.slo[2].name, "max") == 0 && o.slo[2].us == 20000);
	CHECK_EQ_INT(o.repeat, 2);
	CHECK_EQ_INT(o.rt_prio, 0);
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms "
		    "--slo p99=2ms") == -1);
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms --repeat 0 "
		    "--rt-priority 40 --hgrm s.hgrm --watch-cgroup /x") == 0);
	CHECK(o.repeat == 0 && o.rt_prio == 40 && o.hgrm && o.watch_cgroup);
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms "
		    "--rt-priority 99") == -1);
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms "
		    "--repeat 11") == -1);
	/* eight objectives fit, a ninth does not */
	CHECK(parse(&o, "--from 1 --to 2 --steps 2 --slo p50=1,p90=1,p99=1 "
		    "--slo p99.9=1,p99.99=1,max=1") == 0 && o.nslo == 6);
	CHECK(parse(&o, "--from 1 --to 2 --steps 2 --slo p50=1,p90=1,p99=1 "
		    "--slo p99.9=1,p99.99=1,max=1 --slo p99_9=2") == -1);
}

/* --search: its own flags, and what it cannot take */
static void test_search_flags(void)
{
	struct opts o;
	char err[512];
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms") == 0);
	CHECK(o.search && o.resolution_pct == 5 && o.searches == 1);
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms "
		    "--resolution 2.5% --searches 3") == 0);
	CHECK(o.resolution_pct == 2.5 && o.searches == 3);
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms "
		    "--resolution 0") == -1);
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms "
		    "--resolution 101") == -1);
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms "
		    "--searches 101") == -1);
	CHECK(parse(&o, "--search --from 1k --to 20k --slo p90=5ms "
		    "--steps 3") == -1);
	CHECK(parse(&o, "--search --from 1k --slo p90=5ms") == -1);
	CHECK(parse(&o, "--search --from 2k --to 1k --slo p90=5ms") == -1);
	CHECK(parse(&o, "--search --quota --rate 1k --from 10% --to 50% "
		    "--slo p90=5ms") == -1);
	/* the message names the flag and the value */
	char *argv[] = { "loadgen", "sweep", "--search", "--resolution", "x",
			 NULL };
	opts_defaults(&o);
	CHECK(opts_parse(&o, 5, argv, err, sizeof(err)) == -1);
	CHECK(strstr(err, "--resolution 'x'") != NULL);
	char *echo[] = { "loadgen", "echo", "--listen", "udp://127.0.0.1:9",
			 "--service-us", "200", NULL };
	opts_defaults(&o);
	CHECK(opts_parse(&o, 6, echo, err, sizeof(err)) == 0);
	CHECK_EQ_INT(o.service_us, 200);
	echo[5] = "-1";
	opts_defaults(&o);
	CHECK(opts_parse(&o, 6, echo, err, sizeof(err)) == -1);
	CHECK(strstr(err, "--service-us '-1'") != NULL);
}

static void test_order(void)
{
	struct opts o;
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms") == 0);
	CHECK(sweep_step_at(&o, 0) == 0 && sweep_step_at(&o, 4) == 4);
	CHECK(parse(&o, "--from 5k --to 1k --steps 5 --slo p99=1ms") == 0);
	CHECK(sweep_step_at(&o, 0) == 4);	/* 1k is the easiest */
	CHECK(parse(&o, "--quota --rate 1k --from 10% --to 50% --steps 5 "
		    "--slo p99=1ms") == 0);
	CHECK(sweep_step_at(&o, 0) == 4);	/* 50 % is the easiest */
	CHECK(sweep_value(&o, sweep_step_at(&o, 0)) == 50);
}

/* A run result with 1000 samples of us each (from the actual sends too),
 * the rest as given. */
static void result(struct run_result *r, int64_t us, uint64_t lost,
		   bool rate_ok)
{
	memset(r, 0, sizeof(*r));
	hist_init_us(&r->corrected);
	hist_init_us(&r->uncorrected);
	for (int i = 0; i < 1000; i++) {
		hist_record(&r->corrected, us);
		hist_record(&r->uncorrected, us);
	}
	r->sent = 1000 + lost;
	r->received = 1000;
	r->lost = lost;
	r->rate_ok = rate_ok;
	r->target_rate = 1000;
	r->achieved_rate = rate_ok ? 1000 : 900;
}

static void test_judge(void)
{
	struct opts o;
	struct run_result r;
	struct sweep_run s;
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99.9=1ms "
		    "--slo p50=800us") == 0);
	result(&r, 500, 0, true);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.meets && !s.saturated && s.why[0] == 0);
	run_result_free(&r);
	/* one datagram lost is not met, and is where the target saturated */
	result(&r, 500, 1, true);
	sweep_judge_run(&o, &r, 1, &s);
	CHECK(!s.meets && strstr(s.why, "lost 1 of 1001") && s.saturated);
	run_result_free(&r);
	result(&r, 500, 0, false);
	sweep_judge_run(&o, &r, 1, &s);
	CHECK(!s.meets && strstr(s.why, "achieved 900 of 1000 pps"));
	CHECK(!s.saturated);	/* the sender fell behind, not the target */
	run_result_free(&r);
	/* both objectives broken: both named, with units */
	result(&r, 2600, 0, true);
	sweep_judge_run(&o, &r, 2, &s);
	CHECK(!s.meets && strstr(s.why, "p99.9 2.6 ms > 1 ms") &&
	      strstr(s.why, "p50 2.6 ms > 800 us"));
	CHECK(!s.saturated);	/* slow, but it kept up */
	run_result_free(&r);
}

/* Why a run missed: one cause in a word, and every reason in words. */
static void test_causes(void)
{
	struct opts o;
	struct run_result r;
	struct sweep_run s;
	CHECK(parse(&o, "--from 1k --to 5k --steps 5 --slo p99=1ms "
		    "--timeout 500") == 0);
	result(&r, 500, 0, true);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_MET && sweep_cause_name(s.cause) == NULL);
	run_result_free(&r);
	/* over the objective */
	result(&r, 1500, 0, true);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_OBJECTIVE &&
	      strcmp(sweep_cause_name(s.cause), "objective") == 0);
	run_result_free(&r);
	/* lost: no reply within the timeout, and over the objective too */
	result(&r, 1500, 3, true);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_LOSS &&
	      strcmp(sweep_cause_name(s.cause), "loss") == 0);
	CHECK(strstr(s.why, "lost 3 of 1003 (0.3%): no reply within 500 ms"));
	CHECK(strstr(s.why, "p99 1.5 ms > 1 ms"));
	run_result_free(&r);
	/* sends that failed are lost on loadgen's side, not saturation */
	result(&r, 500, 0, true);
	r.send_errors = 7;
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_LOSS && !s.saturated && !s.meets);
	CHECK(strstr(s.why, "7 sends failed (ENOBUFS"));
	run_result_free(&r);
	/* short of the rate, late only from the intended times: the sender */
	result(&r, 500, 0, false);
	hist_reset(&r.corrected);
	hist_record(&r.corrected, 5000);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_SENDER &&
	      strcmp(sweep_cause_name(s.cause), "sender") == 0);
	CHECK(strstr(s.why, "achieved 900 of 1000 pps"));
	run_result_free(&r);
	/* ... but late from the actual sends as well: the target */
	result(&r, 1500, 0, false);
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_OBJECTIVE);
	run_result_free(&r);
	/* the watched cgroup was throttled: that first */
	result(&r, 1500, 3, true);
	snprintf(r.watched.path, sizeof(r.watched.path), "/sys/fs/cgroup/x");
	r.watched.stat.nr_throttled = 4;
	r.watched.stat.throttled_us = 12500;
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_THROTTLED &&
	      strcmp(sweep_cause_name(s.cause), "throttled") == 0);
	CHECK(strstr(s.why, "throttled in 4 periods, 12.5 ms in all"));
	/* ... which says nothing when the run met */
	hist_reset(&r.corrected);
	hist_record(&r.corrected, 500);
	r.lost = 0;
	r.sent = 1000;
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.meets && s.cause == SWEEP_MET && !s.why[0]);
	run_result_free(&r);
	/* interrupted */
	result(&r, 500, 0, true);
	r.interrupted = true;
	sweep_judge_run(&o, &r, 0, &s);
	CHECK(s.cause == SWEEP_INTERRUPTED);
	run_result_free(&r);
}

static struct sweep_run run(int pos, bool meets)
{
	struct sweep_run s = { .pos = pos, .meets = meets };
	return s;
}

static void test_verdict(void)
{
	struct sweep_verdict v;
	/* met, met, failed, failed: capacity at position 1 */
	struct sweep_run a[] = { run(0, 1), run(1, 1), run(2, 0), run(3, 0) };
	sweep_verdict(a, 4, 4, &v);
	CHECK(v.monotonic && v.capacity == 1 && v.first_fail == 2);
	/* The case from the field: failed at 20k and 60k, met at 100k and
	 * 140k: no capacity, not the highest step that met. */
	struct sweep_run b[] = { run(0, 0), run(1, 0), run(2, 1), run(3, 1) };
	sweep_verdict(b, 4, 4, &v);
	CHECK(!v.monotonic && v.capacity == -1 && v.first_fail == 0 &&
	      v.last_met == 3);
	/* ... repeated: the easy steps now met twice, but one failure in
	 * three runs still breaks them */
	struct sweep_run c[] = { run(0, 0), run(1, 0), run(2, 1), run(3, 1),
		run(0, 1), run(1, 1), run(2, 1), run(3, 1),
		run(0, 1), run(1, 1), run(2, 1), run(3, 1) };
	sweep_verdict(c, 12, 4, &v);
	CHECK(!v.monotonic && v.capacity == -1);
	/* a hiccup high up: met, failed, met -> capacity 0, not monotonic */
	struct sweep_run d[] = { run(0, 1), run(1, 0), run(2, 1) };
	sweep_verdict(d, 3, 3, &v);
	CHECK(!v.monotonic && v.capacity == 0 && v.last_met == 2);
	/* everything met: capacity is the last step */
	struct sweep_run e[] = { run(0, 1), run(1, 1) };
	sweep_verdict(e, 2, 2, &v);
	CHECK(v.monotonic && v.capacity == 1 && v.first_fail == -1);
	/* the knee: the first saturated position */
	d[2].saturated = true;
	sweep_verdict(d, 3, 3, &v);
	CHECK_EQ_INT(v.knee, 2);
}

int main(void)
{
	test_flags();
	test_search_flags();
	test_order();
	test_judge();
	test_causes();
	test_verdict();
	return check_done();
}
