/* Unit test of loadgen's flag table against loadgen(1): every flag of the
 * table (and of merge) is in the man page, with its default where it has
 * one, and every flag the man page names is one loadgen takes; and each
 * kind of flag's value: what lands in its field, and the refusal's
 * words. */
#include "check.h"
#include "../../loadgen/merge.h"
#include "../../loadgen/opts.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* The man page with roff's "\-" as "-" and without its font changes
 * ("\fB"), cut into paragraphs at the macros that start one (.TP .PP
 * .IP .SH). */
static char *man;
static char *para[512];
static int npara;

static void load(void)
{
	FILE *f = fopen(check_fixture("../../loadgen/loadgen.1"), "r");
	CHECK(f != NULL);
	if (!f)
		exit(check_done());
	static char text[1 << 17];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	CHECK(n > 0 && n < sizeof(text) - 1);
	man = text;
	char *w = text;
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '\\' && text[i + 1] == 'f' && text[i + 2]) {
			i += 2;
			continue;
		}
		if (text[i] == '\\' && text[i + 1] == '-')
			i++;
		*w++ = text[i];
	}
	*w = 0;
	para[npara++] = text;
	for (char *p = text; (p = strchr(p, '\n')) && npara < 512;) {
		*p++ = 0;
		if (!strncmp(p, ".TP", 3) || !strncmp(p, ".PP", 3) ||
		    !strncmp(p, ".IP", 3) || !strncmp(p, ".SH", 3))
			para[npara++] = p;
		else
			p[-1] = ' ';	/* the paragraph goes on */
	}
}

/* word in s, not inside a longer flag or word. */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = s; (p = strstr(p, word)); p++) {
		bool start = p == s || !(isalnum((unsigned char)p[-1]) ||
					 p[-1] == '-');
		bool end = !(isalnum((unsigned char)p[n]) || p[n] == '-');
		if (start && end)
			return true;
	}
	return false;
}

/* The paragraph documents d as the default: "default D", "D (default)"
 * or "D (the default)". */
static bool says_default(const char *s, const char *d)
{
	char a[96], b[96], c[96];
	snprintf(a, sizeof(a), "default %s", d);
	snprintf(b, sizeof(b), "%s (default)", d);
	snprintf(c, sizeof(c), "%s (the default)", d);
	return has_word(s, a) || strstr(s, b) || strstr(s, c);
}

static bool known(const char *name, size_t n)
{
	for (int i = 0; i < opts_ntable; i++)
		if (strlen(opts_table[i].name) == n &&
		    !strncmp(opts_table[i].name, name, n))
			return true;
	for (const struct option *o = merge_longopts; o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return true;
	return false;
}

static void check_flag(const char *name, const char *dflt)
{
	char flag[64];
	snprintf(flag, sizeof(flag), "--%s", name);
	bool documented = false, with_default = !dflt;
	for (int i = 0; i < npara; i++) {
		if (!has_word(para[i], flag))
			continue;
		documented = true;
		with_default = with_default || says_default(para[i], dflt);
	}
	if (!documented)
		fprintf(stderr, "%s is not in loadgen.1\n", flag);
	if (documented && !with_default)
		fprintf(stderr, "loadgen.1 does not give %s's default %s\n",
			flag, dflt);
	CHECK(documented && with_default);
}

static void test_table_in_man(void)
{
	for (int i = 0; i < opts_ntable; i++)
		check_flag(opts_table[i].name, opts_table[i].def);
	for (const struct option *o = merge_longopts; o->name; o++)
		check_flag(o->name, NULL);
}

static void test_man_in_table(void)
{
	for (int i = 0; i < npara; i++)
		for (const char *p = para[i]; (p = strstr(p, "--")); p += 2) {
			size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
			if (!n || (p > para[i] && isalnum((unsigned char)p[-1])))
				continue;
			if (!known(p + 2, n))
				fprintf(stderr, "loadgen.1 names --%.*s, which "
					"loadgen does not take\n", (int)n, p + 2);
			CHECK(known(p + 2, n));
		}
}

/* What opts_defaults sets is the table's defaults, as the flags would. */
static void test_defaults(void)
{
	struct opts o;
	opts_defaults(&o);
	CHECK(o.duration_s == 10 && o.threads == 1 && o.size == 64);
	CHECK(o.period_us == 100000 && o.timeout_ms == 2000);
	CHECK(o.window_ms == 100 && o.pause_ms == 500 && o.repeat == 2);
	CHECK(!o.quota_threads && !o.epoll_timer && o.spin_us == 0);
	CHECK(o.quota_pct < 0 && o.probe && o.progress == -1 && o.flows == 0);
	CHECK(!o.search && o.resolution_pct == 5 && o.searches == 1);
	CHECK(o.service_us == 0);
}

static char err[1024];

/* loadgen LINE (words split at spaces) on fresh defaults into o: 0 or -1. */
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

int main(void)
{
	load();
	test_table_in_man();
	test_man_in_table();
	test_defaults();
	test_kinds();
	test_refusals();
	return check_done();
}
