/* Unit tests for loadgen's small parts: the command line (values, units,
 * defaults, what each kind of flag sets and its refusal word for word),
 * the datagram header and reply accounting (lost, duplicated, reordered,
 * late, foreign). */
#include "check.h"
#include "../../loadgen/opts.h"
#include "../../loadgen/track.h"
#include "../../loadgen/wire.h"

#include <string.h>

static char err[1024];

static int parse(struct opts *o, const char *line)
{
	char buf[1024], *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "loadgen %s", line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = 0;
	opts_defaults(o);
	return opts_parse(o, argc, argv, err, sizeof(err));
}

static bool says(const char *what)
{
	if (strstr(err, what))
		return true;
	fprintf(stderr, "error was: %s (wanted '%s')\n", err, what);
	return false;
}

static void test_values(void)
{
	double r;
	int64_t us;
	CHECK(opts_parse_rate("20k", &r) == 0 && r == 20000);
	CHECK(opts_parse_rate("1.5M", &r) == 0 && r == 1500000);
	CHECK(opts_parse_rate("0", &r) == -1);
	CHECK(opts_parse_rate("12x", &r) == -1);
	CHECK(opts_parse_rate("1e308k", &r) == -1);	/* inf once scaled */
	CHECK(opts_parse_time_us("30", &us) == 0 && us == 30000000);
	CHECK(opts_parse_time_us("500ms", &us) == 0 && us == 500000);
	CHECK(opts_parse_time_us("2m", &us) == 0 && us == 120000000);
	CHECK(opts_parse_time_us("-1", &us) == -1);
	struct opts_slo slo[4];
	CHECK_EQ_INT(opts_parse_slo("p99=1ms,p99.9=5000,max=1s", slo, 4), 3);
	CHECK(strcmp(slo[1].name, "p99_9") == 0 && slo[1].pct == 99.9);
	CHECK_EQ_INT(slo[0].us, 1000);
	CHECK_EQ_INT(slo[1].us, 5000);
	CHECK_EQ_INT(slo[2].us, 1000000);
	CHECK_EQ_INT(opts_parse_slo("p98=1ms", slo, 4), -1);
	CHECK_EQ_INT(opts_parse_slo("p99", slo, 4), -1);
}

static void test_command_lines(void)
{
	struct opts o;
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 2k --duration 3") == 0);
	CHECK(o.mode == OPTS_RUN);
	CHECK(o.rate == 2000 && o.duration_s == 3);
	/* a parse that stopped inside "-hx" leaves nothing for the next */
	CHECK(parse(&o, "-hx") == 0 && o.mode == OPTS_HELP);
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 2k") == 0);
	CHECK_EQ_INT(o.threads, 1);
	CHECK_EQ_INT(o.flows, 1);
	CHECK_EQ_INT(o.size, 64);
	CHECK(o.quota_pct < 0);
	CHECK_EQ_INT(o.period_us, 100000);
	CHECK(parse(&o, "--target udp://[::1]:9 --rate 100 --threads 2 "
		    "--cpu-quota 20% --quota-period-us 10000 --cpus 0-1 "
		    "--quota-scope threads --json x.json") == 0);
	CHECK(o.quota_pct == 20 && o.period_us == 10000 && o.quota_threads);
	CHECK_EQ_INT(o.ncpus, 2);
	CHECK_EQ_INT(o.flows, 2);
	CHECK(o.json && strcmp(o.json, "x.json") == 0);
	CHECK(!o.epoll_timer);
	CHECK_EQ_INT(o.spin_us, 0);
	CHECK(parse(&o, "--target tcp://127.0.0.1:9 --rate 1") == 0 &&
	      o.target.kind == ADDR_TCP);
	CHECK(parse(&o, "--target unix://@relay --rate 1") == 0 &&
	      o.target.kind == ADDR_UNIX);
	CHECK(parse(&o, "--target unix://relay --rate 1") == -1 &&
	      says("expected unix:///PATH"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --timer epoll") == 0
	      && o.epoll_timer);
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --timer hz") == -1
	      && says("timerfd or epoll"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --spin-us 50") == 0
	      && o.spin_us == 50);
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --spin-us 10001")
	      == -1 && says("from 0 to 10000"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --spin-us 5us")
	      == -1 && says("--spin-us '5us'"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --quota-period 5ms")
	      == 0 && o.period_us == 5000);
	CHECK(parse(&o, "sweep --target udp://127.0.0.1:9 --from 1k --to 10k "
		    "--steps 4 --slo p99=1ms") == 0);
	CHECK(o.mode == OPTS_SWEEP && o.from == 1000 && o.to == 10000);
	CHECK(parse(&o, "sweep --quota --rate 5k --target udp://127.0.0.1:9 "
		    "--from 10% --to 50% --steps 5 --slo p99=2ms") == 0);
	CHECK(o.sweep == OPTS_SWEEP_QUOTA && o.from == 10 && o.to == 50);
	CHECK(parse(&o, "echo --listen udp://127.0.0.1:7") == 0);
	CHECK(o.mode == OPTS_ECHO);
	CHECK(parse(&o, "--help") == 0 && o.mode == OPTS_HELP);
}

static void test_errors(void)
{
	struct opts o;
	CHECK(parse(&o, "--rate 100") == -1 && says("--target"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9") == -1 && says("--rate"));
	CHECK(parse(&o, "--target udp://nope:x --rate 1") == -1 &&
	      says("--target"));
	CHECK(parse(&o, "--target tls://127.0.0.1:9 --rate 1") == -1 &&
	      says("say udp://, tcp:// or unix://"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate fast") == -1 &&
	      says("'fast' is not a rate"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 5M") == -1 &&
	      says("--threads 3"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --size 20") == -1
	      && says("from 40 to 65507"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --cpu-quota x")
	      == -1 && says("--cpu-quota 'x'"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --quota-period-us 5")
	      == -1 && says("1000 us to 1 s"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --threads 2 "
		    "--flows 1") == -1 && says("--flows 1"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --bogus") == -1 &&
	      says("unknown option '--bogus'"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate") == -1 &&
	      says("needs a value"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 extra") == -1 &&
	      says("unexpected argument 'extra'"));
	CHECK(parse(&o, "sweep --target udp://127.0.0.1:9 --from 1 --to 2") == -1
	      && says("--slo"));
	CHECK(parse(&o, "sweep --target udp://127.0.0.1:9 --from 1 --to 2 "
		    "--steps 2 --slo p99=1ms --timeseries x") == -1 &&
	      says("single runs"));
	CHECK(parse(&o, "--target udp://127.0.0.1:9 --rate 1 --cpus 9x") == -1
	      && says("--cpus"));
}

/* loadgen RUN FLAGS is refused with exactly the words want. */
#define RUN "--target udp://127.0.0.1:9 --rate 1k "
static void refused(const char *line, const char *want)
{
	struct opts o;
	CHECK(parse(&o, line) == -1);
	if (strcmp(err, want) != 0)
		fprintf(stderr, "loadgen %s:\n  said   %s\n  wanted %s\n", line,
			err, want);
	CHECK(strcmp(err, want) == 0);
}

/* Each kind sets its field from the value, as loadgen(1) says. */
static void test_kinds(void)
{
	struct opts o;
	CHECK(parse(&o, RUN "--duration 1.5 --cpu-quota 12.5% --quota-period "
		    "20ms --quota-scope threads --timer epoll --no-probe "
		    "--no-progress --cpus 0,1") == 0);
	CHECK(o.rate == 1000 && o.duration_s == 1.5 && o.quota_pct == 12.5);
	CHECK(o.period_us == 20000 && o.quota_threads && o.epoll_timer);
	CHECK(!o.probe && o.progress == 0 && o.ncpus == 2 && o.cpus[1] == 1);
	CHECK(strcmp(o.target_text, "udp://127.0.0.1:9") == 0);
	CHECK(o.target.kind == ADDR_UDP);
	CHECK(parse(&o, RUN "--quota-scope process --timer timerfd "
		    "--quota-period-us 5000 --duration 500ms") == 0);
	CHECK(!o.quota_threads && !o.epoll_timer && o.period_us == 5000);
	CHECK(o.duration_s == 0.5);
	CHECK(parse(&o, RUN "--quota-period-us 2ms --cpu-quota 150") == 0);
	CHECK(o.period_us == 2000 && o.quota_pct == 150);
	CHECK(parse(&o, "sweep --search --target udp://127.0.0.1:9 --from 1k "
		    "--to 0.5M --slo p99=1ms --slo max=5ms --resolution 2.5% "
		    "--start 3k") == 0);
	CHECK(o.mode == OPTS_SWEEP && o.search && o.from == 1000 &&
	      o.to == 500000 && o.nslo == 2 && o.resolution_pct == 2.5 &&
	      o.start == 3000);
	CHECK(parse(&o, "sweep --quota --target udp://127.0.0.1:9 --rate 1k "
		    "--from 10% --to 50 --steps 3 --slo p99=1ms") == 0);
	CHECK(o.sweep == OPTS_SWEEP_QUOTA && o.from == 10 && o.to == 50);
	CHECK(parse(&o, "echo --listen udp://127.0.0.1:7") == 0);
	CHECK(o.listen.kind == ADDR_UDP);
	CHECK(parse(&o, RUN "--help") == 0 && o.mode == OPTS_HELP);
}

/* Each kind's refusal, word for word as before they were table rows. */
static void test_refusals(void)
{
	refused("--target http://a:1 --rate 1k",
		"--target: 'http://a:1': unknown scheme 'http' (expected "
		"udp://, tcp://, tls://, unix://)");
	refused("--target tls://127.0.0.1:9 --rate 1k",
		"--target 'tls://127.0.0.1:9': say udp://, tcp:// or unix://");
	refused("echo --listen tcp://127.0.0.1:5",
		"--listen 'tcp://127.0.0.1:5': echo serves udp:// only");
	refused("--target udp://127.0.0.1:9 --rate x",
		"--rate 'x' is not a rate (packets per second: 20000, 20k, 1.5M)");
	refused("--target udp://127.0.0.1:9 --rate 1e12",
		"--rate '1e12' is outside 0.001 to 512000000 packets per second "
		"(2000000 pps per thread, 256 threads)");
	refused(RUN "--duration 0.0001",
		"--duration '0.0001' is not a duration of at least 1 ms "
		"(30, 30s, 500ms)");
	refused(RUN "--cpu-quota 0", "--cpu-quota '0' is not a percentage of "
		"one CPU above 0 and at most 100000% (20%, 150%)");
	refused(RUN "--cpu-quota 200000%", "--cpu-quota '200000%' is not a "
		"percentage of one CPU above 0 and at most 100000% (20%, 150%)");
	refused(RUN "--quota-period-us 2s",
		"--quota-period-us '2s' is not a period from 1000 us to 1 s");
	refused(RUN "--quota-period 10",
		"--quota-period '10' is not a period from 1000 us to 1 s");
	refused(RUN "--quota-scope x", "--quota-scope 'x': say process or "
		"threads");
	refused(RUN "--quota-scope threadsx", "--quota-scope 'threadsx': say "
		"process or threads");
	refused(RUN "--timer epol", "--timer 'epol': say timerfd or epoll");
	refused(RUN "--cpus x", "--cpus: bad CPU list 'x' at 'x': expected a "
		"CPU number 0..1023");
	refused(RUN "--from x", "--from 'x' is not a rate or a quota percentage");
	refused(RUN "--to 0", "--to '0' is not a rate or a quota percentage");
	refused(RUN "--resolution 0.01",
		"--resolution '0.01' is not a percentage from 0.1 to 100 (5, 2.5%)");
	refused(RUN "--start x", "--start 'x' is not a rate");
	refused(RUN "--slo p99=1ms --slo p99=2ms",
		"--slo 'p99=2ms': p99 is given twice");
	refused(RUN "--slo x", "--slo 'x' is not a list of PERCENTILE=LATENCY "
		"(p99=1ms,max=20ms; percentiles p50 p90 p99 p99.9 p99.99 max; "
		"at most 8 in all)");
	refused(RUN "--threads 0", "--threads '0' is not a number from 1 to 256");
	refused(RUN "--timeout x", "--timeout 'x' is not a time in ms from 1 to "
		"86400000 (or with a unit: 2s, 500ms)");
	refused(RUN "--no-probe=1", "unknown option '--no-probe=1' (see loadgen "
		"--help)");
}

static void test_wire(void)
{
	uint8_t buf[64] = { 0 };
	struct wire w = { .run_id = 7, .thread = 3, .seq = 123456789012ULL,
			  .intended_ns = 42, .sent_ns = 43 }, r;
	wire_encode(&w, buf);
	CHECK(wire_decode(buf, sizeof(buf), 7, &r));
	CHECK(r.thread == 3 && r.seq == 123456789012ULL);
	CHECK(r.intended_ns == 42 && r.sent_ns == 43);
	CHECK(!wire_decode(buf, sizeof(buf), 8, &r));	/* another run */
	CHECK(!wire_decode(buf, WIRE_HDR_LEN - 1, 7, &r));
	buf[0] ^= 1;
	CHECK(!wire_decode(buf, sizeof(buf), 7, &r));	/* not ours */
}

static void test_track(void)
{
	struct track t;
	CHECK(track_init(&t, 100) == 0);
	CHECK(track_reply(&t, 0, false) == TRACK_NEW);
	CHECK(track_reply(&t, 5, false) == TRACK_NEW);
	CHECK(track_reply(&t, 3, false) == TRACK_NEW);	/* behind 5 */
	CHECK(track_reply(&t, 5, false) == TRACK_DUPLICATE);
	CHECK(track_reply(&t, 6, true) == TRACK_NEW);
	CHECK(track_reply(&t, 100, false) == TRACK_FOREIGN);
	track_foreign(&t);
	CHECK_EQ_INT(t.received, 4);
	CHECK_EQ_INT(t.duplicated, 1);
	CHECK_EQ_INT(t.reordered, 1);
	CHECK_EQ_INT(t.late, 1);
	CHECK_EQ_INT(t.foreign, 2);
	CHECK_EQ_INT(track_lost(&t, 10), 6);
	track_free(&t);
}

int main(void)
{
	test_values();
	test_command_lines();
	test_errors();
	test_kinds();
	test_refusals();
	test_wire();
	test_track();
	return check_done();
}
