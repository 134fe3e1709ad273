/*
 * params: demo-scenario's command line and run spec through one lib/opt
 * table, and the options that are no parameters of the scenario (where
 * the programs are, where the results go, the spec, the clock).
 */
#include "params.h"

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "opt.h"

#define PARAMS_STR(x) #x

static const struct opt table[] = {
#define PARAMS_ROW(n, lo, hi, host, virt, a, h) \
	{ .name = #n, .type = OPT_INT, .off = offsetof(struct params, n), \
	  .min = lo, .max = hi, .def = PARAMS_STR(host), \
	  .alt = PARAMS_STR(virt), .arg = a, .help = h },
	SCENARIO_PARAMS(PARAMS_ROW)
#undef PARAMS_ROW
};
#define NTABLE ((int)(sizeof(table) / sizeof(table[0])))

/* The table's two profiles of defaults: the host clock's, the virtual's. */
static const char *const clocks[2] = { "host", "virtual" };

/* The options past the table's (whose rows all return O_PARAM). */
enum { O_PARAM = 256, O_RELAY, O_LOADGEN, O_OUT, O_RUN_DIR, O_SPEC, O_CLOCK,
       O_WATCH, O_HEARTBEAT, O_CGROUP, O_RESOLVE, O_DESCRIBE, O_HELP };
static const struct option fixed[] = {
	{ "relay", required_argument, NULL, O_RELAY },
	{ "loadgen", required_argument, NULL, O_LOADGEN },
	{ "out", required_argument, NULL, O_OUT },
	{ "run-dir", required_argument, NULL, O_RUN_DIR },
	{ "spec", required_argument, NULL, O_SPEC },
	{ "clock", required_argument, NULL, O_CLOCK },
	{ "watch", no_argument, NULL, O_WATCH },
	{ "heartbeat", required_argument, NULL, O_HEARTBEAT },
	{ "cgroup", required_argument, NULL, O_CGROUP },
	{ "resolve", no_argument, NULL, O_RESOLVE },
	{ "describe", no_argument, NULL, O_DESCRIBE },
	{ "help", no_argument, NULL, O_HELP },
};
#define NFIXED ((int)(sizeof(fixed) / sizeof(fixed[0])))

static void usage(FILE *f)
{
	fputs("usage: demo-scenario --relay PATH --loadgen PATH --out DIR [--spec FILE]\n"
	      "                     [--clock host|virtual] [PARAMETER]...\n"
	      "       demo-scenario --watch --heartbeat FILE --cgroup DIR --out DIR\n"
	      "                     [--spec FILE] [--clock host|virtual] [PARAMETER]...\n"
	      "       demo-scenario [--spec FILE] [--clock host|virtual] [PARAMETER]... --resolve\n"
	      "       demo-scenario --describe\n"
	      "\n"
	      "The scenario's parameters, each with its default on the host clock and, where\n"
	      "it differs, on the virtual one (kernel/vm/boot):\n", f);
	opt_usage_profiles(f, table, NTABLE, clocks);
	fputs("\n"
	      "  --relay PATH, --loadgen PATH  the programs to run\n"
	      "  --out DIR          where the results go (created)\n"
	      "  --run-dir DIR      where the relay's heartbeat file goes (/tmp)\n"
	      "  --spec FILE        a run spec: its \"scenario\" object names parameters by\n"
	      "                     the names of scenario.json's params, its \"clock\" the\n"
	      "                     clock whose defaults apply; flags after it win\n"
	      "  --clock CLOCK      host or virtual: whose defaults apply (above a spec's)\n"
	      "  --watch            only the watchdog, around a relay and a co-tenant\n"
	      "                     started by others (a systemd test host), until\n"
	      "                     SIGTERM or SIGINT: --heartbeat FILE is the relay's\n"
	      "                     (relay --heartbeat), --cgroup DIR the co-tenant's,\n"
	      "                     which must hold the parameters' quota\n"
	      "  --resolve          print the resolved parameters as JSON and exit\n"
	      "  --describe         print the parameters' table as JSON and exit\n", f);
}

static int clock_named(const char *name, bool *virt)
{
	for (int k = 0; k < 2; k++)
		if (strcmp(name, clocks[k]) == 0)
			return *virt = k == 1, 0;
	return -1;
}

/* The spec at path, or NULL after saying why. */
static json_t *load_spec(const char *path)
{
	json_error_t e;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!root)
		fprintf(stderr, "demo-scenario: %s:%d: %s\n", path, e.line, e.text);
	return root;
}

/* The clock a spec names, if it names one, into virt: 0, or -1 after
 * saying why. */
static int spec_clock(const char *path, bool *virt)
{
	json_t *root = load_spec(path);
	if (!root)
		return -1;
	json_t *c = json_object_get(root, "clock");
	int rc = 0;
	if (c && (!json_is_string(c) || clock_named(json_string_value(c), virt) < 0)) {
		fprintf(stderr, "demo-scenario: %s: clock: expected \"host\" or \"virtual\"\n",
			path);
		rc = -1;
	}
	json_decref(root);
	return rc;
}

/* A spec's "scenario" object into p: 0, or -1 after saying each key that
 * was wrong. */
static int apply_spec(struct params *p, const char *path)
{
	json_t *root = load_spec(path);
	if (!root)
		return -1;
	json_t *s = json_object_get(root, "scenario");
	char why[4096];
	int rc = 0;
	if (!json_is_object(s)) {
		fprintf(stderr, "demo-scenario: %s: no \"scenario\" object\n", path);
		rc = -1;
	} else if (opt_json(table, NTABLE, p, s, "scenario", why, sizeof(why)) < 0) {
		for (char *save, *line = strtok_r(why, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			fprintf(stderr, "demo-scenario: %s: %s\n", path, line);
		rc = -1;
	}
	json_decref(root);
	return rc;
}

static void print_json(json_t *o)
{
	if (!o) {
		fprintf(stderr, "demo-scenario: out of memory\n");
		exit(70);
	}
	json_dumpf(o, stdout, JSON_SORT_KEYS);
	putchar('\n');
	json_decref(o);
}

static void describe(void)
{
	print_json(json_pack("{s:s, s:[s,s], s:o}", "program", "demo-scenario",
			     "clocks", clocks[0], clocks[1],
			     "params", opt_describe(table, NTABLE, clocks)));
}

/* The clock: --clock, else the last spec's that names one. The first pass
 * over argv, which also says what is wrong with the command line itself;
 * --help and --describe end it. 0, or -1 after saying why. */
static int find_clock(int argc, char **argv, const struct option *opts, bool *virt)
{
	bool flag = false;
	int c, li;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, &li)) != -1) {
		switch (c) {
		case O_HELP:
			usage(stdout);
			exit(0);
		case O_DESCRIBE:
			describe();
			exit(0);
		case O_CLOCK:
			if (clock_named(optarg, virt) < 0) {
				fprintf(stderr, "demo-scenario: --clock '%s': expected host or "
					"virtual\n", optarg);
				return -1;
			}
			flag = true;
			break;
		case O_SPEC: {
			bool v = *virt;
			if (spec_clock(optarg, &v) < 0)
				return -1;
			if (!flag)
				*virt = v;
			break;
		}
		case ':':
			fprintf(stderr, "demo-scenario: %s needs a value\n", argv[optind - 1]);
			usage(stderr);
			return -1;
		case '?':
			fprintf(stderr, "demo-scenario: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "demo-scenario: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

int params_parse(int argc, char **argv, struct params *p)
{
	struct option opts[NTABLE + NFIXED + 1];
	char names[1024], why[256];
	if (opt_longopts(table, NTABLE, opts, names, sizeof(names), O_PARAM) < 0) {
		fprintf(stderr, "demo-scenario: the table outgrew its names\n");
		return -1;
	}
	memcpy(opts + NTABLE, fixed, sizeof(fixed));
	opts[NTABLE + NFIXED] = (struct option){ 0 };
	opterr = 0;
	bool virt = false;
	if (find_clock(argc, argv, opts, &virt) < 0)
		return -1;

	memset(p, 0, sizeof(*p));
	if (opt_defaults_for(table, NTABLE, virt, p, why, sizeof(why)) < 0) {
		fprintf(stderr, "demo-scenario: %s\n", why);	/* the table is wrong */
		return -1;
	}
	p->run_dir = "/tmp";
	bool resolve = false;
	int c, li;
	optind = 0;
	while ((c = getopt_long(argc, argv, ":", opts, &li)) != -1) {
		switch (c) {
		case O_RELAY: p->relay = optarg; break;
		case O_LOADGEN: p->loadgen = optarg; break;
		case O_OUT: p->out = optarg; break;
		case O_RUN_DIR: p->run_dir = optarg; break;
		case O_WATCH: p->watch = true; break;
		case O_HEARTBEAT: p->heartbeat = optarg; break;
		case O_CGROUP: p->cgroup = optarg; break;
		case O_RESOLVE: resolve = true; break;
		case O_SPEC:
			if (apply_spec(p, optarg) < 0)
				return -1;
			break;
		case O_PARAM:
			if (opt_parse(&table[li], p, optarg, why, sizeof(why)) < 0) {
				fprintf(stderr, "demo-scenario: --%s: %s\n", opts[li].name, why);
				return -1;
			}
			break;
		}
	}
	int64_t quota = cg_quota_us(p->cpu_quota_pct, p->period_us);
	if (quota < 1000) {
		fprintf(stderr, "demo-scenario: cpu_quota_pct %d of period_us %d is %lld us, below "
			"the 1000 us cpu.max allows\n", p->cpu_quota_pct, p->period_us,
			(long long)quota);
		return -1;
	}
	if (p->watchdog_prio <= p->relay_prio || p->cpu == p->watchdog_cpu) {
		fprintf(stderr, "demo-scenario: the watchdog needs a priority above the relay's "
			"and a CPU of its own (watchdog_prio, watchdog_cpu)\n");
		return -1;
	}
	if (resolve) {
		print_json(params_json(p));
		exit(0);
	}
	if (p->watch ? !p->heartbeat || !p->cgroup || !p->out || p->relay || p->loadgen
		     : !p->relay || !p->loadgen || !p->out || p->heartbeat || p->cgroup) {
		fprintf(stderr, "demo-scenario: %s\n", p->watch
			? "--watch takes --heartbeat, --cgroup and --out, not --relay or --loadgen"
			: "--relay, --loadgen and --out are required (--heartbeat and --cgroup "
			  "go with --watch)");
		usage(stderr);
		return -1;
	}
	if (p->ticker_cpu < 0)
		p->ticker_cpu = p->cpu;
	return 0;
}

json_t *params_json(const struct params *p)
{
	json_t *o = json_object();
	for (int i = 0; i < NTABLE; i++)
		json_object_set_new(o, table[i].name,
				    json_integer(*(const int *)((const char *)p + table[i].off)));
	return o;
}
