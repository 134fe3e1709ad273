#include "params.h"

#include "cgroup.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
	const char *name, *flag, *help;
	int min, max, def;
	size_t off;
};

static const struct row rows[] = {
#define PARAMS_ROW(n, f, lo, hi, d, h) \
	{ .name = #n, .flag = f, .help = h, .min = lo, .max = hi, .def = d, \
	  .off = offsetof(struct params, n) },
	SCENARIO_PARAMS(PARAMS_ROW)
#undef PARAMS_ROW
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* The options past the table's: the programs, the results, the spec. */
enum { OPT_RELAY = 1000, OPT_LOADGEN, OPT_OUT, OPT_RUN_DIR, OPT_SPEC, OPT_RESOLVE, OPT_HELP };

static int *field(struct params *p, const struct row *r)
{
	return (int *)((char *)p + r->off);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: demo-scenario --relay PATH --loadgen PATH --out DIR [--spec FILE] [options]\n"
		   "       demo-scenario [--spec FILE] [options] --resolve\n");
	for (size_t i = 0; i < NROWS; i++)
		fprintf(f, "  --%-16s %s (%d)\n", rows[i].flag, rows[i].help, rows[i].def);
	fprintf(f, "  --run-dir DIR      where the relay's heartbeat file goes (/tmp)\n"
		   "  --spec FILE        a run spec: its \"scenario\" object names parameters\n"
		   "                     by the names of scenario.json's params\n"
		   "  --resolve          print the resolved parameters as JSON and exit\n");
}

static int set(struct params *p, const struct row *r, long long v, const char *where,
	       const char *what)
{
	if (v < r->min || v > r->max) {
		fprintf(stderr, "demo-scenario: %s%s '%s': expected a whole number in %d..%d\n",
			where, r->flag, what, r->min, r->max);
		return -1;
	}
	*field(p, r) = (int)v;
	return 0;
}

static int apply_spec(struct params *p, const char *path)
{
	json_error_t e;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		fprintf(stderr, "demo-scenario: %s:%d: %s\n", path, e.line, e.text);
		return -1;
	}
	json_t *s = json_object_get(root, "scenario");
	int rc = 0;
	if (!json_is_object(s)) {
		fprintf(stderr, "demo-scenario: %s: no \"scenario\" object\n", path);
		rc = -1;
	}
	const char *key;
	json_t *v;
	json_object_foreach(s, key, v) {
		const struct row *r = NULL;
		for (size_t i = 0; i < NROWS && !r; i++)
			if (strcmp(rows[i].name, key) == 0)
				r = &rows[i];
		char where[512];
		snprintf(where, sizeof(where), "%s: scenario.%s: ", path, key);
		if (!r) {
			fprintf(stderr, "demo-scenario: %sno such parameter\n", where);
			rc = -1;
		} else if (!json_is_integer(v)) {
			fprintf(stderr, "demo-scenario: %sexpected a whole number in %d..%d\n",
				where, r->min, r->max);
			rc = -1;
		} else {
			char text[32];
			snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
			if (set(p, r, json_integer_value(v), where, text) < 0)
				rc = -1;
		}
	}
	json_decref(root);
	return rc;
}

int params_parse(int argc, char **argv, struct params *p)
{
	struct option opts[NROWS + 8];
	for (size_t i = 0; i < NROWS; i++) {
		opts[i] = (struct option){ rows[i].flag, required_argument, NULL, (int)i };
		*field(p, &rows[i]) = rows[i].def;
	}
	const struct option more[] = {
		{ "relay", required_argument, NULL, OPT_RELAY },
		{ "loadgen", required_argument, NULL, OPT_LOADGEN },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "run-dir", required_argument, NULL, OPT_RUN_DIR },
		{ "spec", required_argument, NULL, OPT_SPEC },
		{ "resolve", no_argument, NULL, OPT_RESOLVE },
		{ "help", no_argument, NULL, OPT_HELP },
		{ 0 } };
	memcpy(opts + NROWS, more, sizeof(more));
	p->relay = p->loadgen = p->out = NULL;
	p->run_dir = "/tmp";
	bool resolve = false;
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;
		long long v;
		switch (ch) {
		case OPT_RELAY: p->relay = optarg; continue;
		case OPT_LOADGEN: p->loadgen = optarg; continue;
		case OPT_OUT: p->out = optarg; continue;
		case OPT_RUN_DIR: p->run_dir = optarg; continue;
		case OPT_RESOLVE: resolve = true; continue;
		case OPT_HELP: usage(stdout); exit(0);
		case OPT_SPEC:
			if (apply_spec(p, optarg) < 0)
				return -1;
			continue;
		case '?': usage(stderr); return -1;
		}
		errno = 0;
		v = strtoll(optarg, &end, 10);
		if (errno || *end || end == optarg)
			v = (long long)rows[ch].min - 1;	/* out of range: said below */
		if (set(p, &rows[ch], v, "--", optarg) < 0)
			return -1;
	}
	if (optind < argc) {
		fprintf(stderr, "demo-scenario: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (cg_quota_us(p->cpu_quota_pct, p->period_us) < 1000) {
		fprintf(stderr, "demo-scenario: cpu_quota_pct %d of period_us %d is %lld us, below "
			"the 1000 us cpu.max allows\n", p->cpu_quota_pct, p->period_us,
			(long long)cg_quota_us(p->cpu_quota_pct, p->period_us));
		return -1;
	}
	if (p->watchdog_prio <= p->relay_prio || p->cpu == p->watchdog_cpu) {
		fprintf(stderr, "demo-scenario: the watchdog needs a priority above the relay's "
			"and a CPU of its own (watchdog_prio, watchdog_cpu)\n");
		return -1;
	}
	if (resolve) {
		json_t *o = params_json(p);
		json_dumpf(o, stdout, JSON_SORT_KEYS);
		putchar('\n');
		json_decref(o);
		exit(0);
	}
	if (!p->relay || !p->loadgen || !p->out) {
		fprintf(stderr, "demo-scenario: --relay, --loadgen and --out are required\n");
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
	for (size_t i = 0; i < NROWS; i++)
		json_object_set_new(o, rows[i].name,
				    json_integer(*field((struct params *)p, &rows[i])));
	return o;
}
