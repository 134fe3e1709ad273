/*
 * mflags: every flag of epmodel is a row of one table: the parameters'
 * rows come from MODEL_PARAMS, so the flag, the usage, the default, the
 * spec's key and summary.json's cannot disagree.
 */
#include "mflags.h"

#include <getopt.h>
#include <string.h>

#include "opt.h"
#include "why.h"

#define MFLAGS_STR(x) #x
#define MFLAGS_ONE(...) + 1
/* The parameters: the table's first rows. */
#define NPARAMS (0 MODEL_PARAMS(MFLAGS_ONE))

static int parse_spec(void *base, const char *path, char *why, size_t whylen);

static int parse_variants(void *base, const char *value, char *why,
			  size_t whylen)
{
	struct mflags *f = base;
	char list[128];
	if (strlen(value) >= sizeof(list))
		return why_set(why, whylen, "'%.40s...' is too long", value);
	strcpy(list, value);
	f->nkinds = 0;
	for (char *save, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		enum rlock_kind k;
		if (rlock_parse(name, &k) != 0)
			return why_set(why, whylen, "no lock kind '%s' (rwlock, "
				       "pi_mutex, mutex)", name);
		for (int i = 0; i < f->nkinds; i++)
			if (f->kinds[i] == k)
				return why_set(why, whylen, "'%s' given twice",
					       name);
		f->kinds[f->nkinds++] = k;
	}
	if (f->nkinds == 0)
		return why_set(why, whylen, "'%s' names no lock kind", value);
	return 0;
}

static const struct opt table[] = {
#define MFLAGS_ROW(n, lo, hi, d, a, sp, h) \
	{ .name = #n, .type = OPT_INT, \
	  .off = offsetof(struct mflags, p) + offsetof(struct model_params, n), \
	  .min = lo, .max = hi, .def = MFLAGS_STR(d), .arg = a, .spec = sp, \
	  .help = h },
	MODEL_PARAMS(MFLAGS_ROW)
#undef MFLAGS_ROW
	{ .name = "variant", .type = OPT_FUNC, .def = "rwlock,pi_mutex,mutex",
	  .arg = "LIST", .parse = parse_variants,
	  .help = "lock kinds, in this order: rwlock, pi_mutex, mutex" },
	{ .name = "out", .type = OPT_STR, .off = offsetof(struct mflags, out),
	  .size = sizeof(((struct mflags *)0)->out), .def = ".", .arg = "DIR",
	  .help = "where the result files go (created)" },
	{ .name = "spec", .type = OPT_FUNC, .arg = "FILE", .parse = parse_spec,
	  .help = "a run spec: its \"model\" object names parameters\n"
		  "by the names of summary.json's params" },
	{ .name = "resolve", .type = OPT_BOOL,
	  .off = offsetof(struct mflags, resolve), .bare = "true",
	  .help = "print the resolved parameters as JSON and exit" },
	{ .name = "describe", .type = OPT_BOOL,
	  .off = offsetof(struct mflags, describe), .bare = "true",
	  .help = "print the parameters' table as JSON and exit" },
	{ .name = "help", .type = OPT_BOOL, .off = offsetof(struct mflags, help),
	  .bare = "true", .help = "this text" },
};
#define NTABLE ((int)(sizeof(table) / sizeof(table[0])))

/* A spec's "model" object through the parameters' rows; several refusals
 * on one line, since a why is one. */
static int parse_spec(void *base, const char *path, char *why, size_t whylen)
{
	json_error_t e;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
	if (!root)
		return why_set(why, whylen, "%s:%d: %s", path, e.line, e.text);
	json_t *m = json_object_get(root, "model");
	char bad[2048], line[2048 * 2];
	int rc = 0;
	if (!json_is_object(m)) {
		rc = why_set(why, whylen, "%s: no \"model\" object", path);
	} else if (opt_json(table, NPARAMS, base, m, "model", bad,
			    sizeof(bad)) < 0) {
		size_t k = 0;
		for (const char *c = bad; *c; c++)
			if (*c == '\n')
				line[k++] = ';', line[k++] = ' ';
			else
				line[k++] = *c;
		line[k] = 0;
		rc = why_set(why, whylen, "%s: %s", path, line);
	}
	json_decref(root);
	return rc;
}

json_t *mflags_json(const struct model_params *p)
{
	json_t *o = json_object();
#define MFLAGS_KEY(n, ...) json_object_set_new(o, #n, json_integer(p->n));
	MODEL_PARAMS(MFLAGS_KEY)
#undef MFLAGS_KEY
	return o;
}

json_t *mflags_describe(void)
{
	static const char *const clocks[2] = { "host", NULL };
	return json_pack("{s:s, s:[s], s:o}", "program", "epmodel", "clocks",
			 clocks[0], "params", opt_describe(table, NPARAMS,
							  clocks));
}

void mflags_usage(FILE *out)
{
	fputs(
"usage: epmodel [OPTION]...\n"
"Producers in a CPU-quota cgroup take a lock shared, a SCHED_FIFO consumer\n"
"takes it exclusive every tick; all on one CPU. Reports how long the consumer\n"
"waited, per lock kind. Needs root (cgroup, SCHED_FIFO). Defaults in\n"
"parentheses.\n"
"\n", out);
	opt_usage(out, table, NTABLE);
	fputs(
"\n"
"Writes DIR/<variant>.hgrm, DIR/<variant>.timeseries.csv, DIR/summary.json.\n"
"Exit status: 0 done, 64 bad usage, 70 internal failure, 71 the system\n"
"refused (cgroup, SCHED_FIFO, pinning), 128+N ended by signal N.\n", out);
}

int mflags_parse(struct mflags *f, int argc, char **argv, char *why,
		 size_t whylen)
{
	memset(f, 0, sizeof(*f));
	char e[256];
	/* the table's own values: a failure is a bug in it */
	if (opt_defaults(table, NTABLE, f, e, sizeof(e)) < 0)
		return why_set(why, whylen, "%s", e);
	struct option longopts[NTABLE + 1];
	char names[256];
	if (opt_longopts(table, NTABLE, longopts, names, sizeof(names), 256) < 0)
		return why_set(why, whylen, "the flag table outgrew its names");
	optind = 0;
	opterr = 0;
	int c, li = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, &li)) != -1) {
		if (c == 'h') {
			f->help = true;
			continue;
		}
		if (c == '?')
			return why_set(why, whylen, "unknown option '%s' (see "
				       "epmodel --help)", argv[optind - 1]);
		if (c == ':')
			return why_set(why, whylen, "option '%s' needs a value",
				       argv[optind - 1]);
		if (opt_parse(&table[li], f, optarg ? optarg : table[li].bare,
			      e, sizeof(e)) < 0)
			return why_set(why, whylen, "--%s: %s", longopts[li].name,
				       e);
	}
	if (optind < argc)
		return why_set(why, whylen, "unexpected argument '%s'",
			       argv[optind]);
	int64_t quota = cg_quota_us(f->p.cpu_quota_pct, f->p.period_us);
	if (quota < 1000)
		return why_set(why, whylen, "--cpu-quota-pct %d of --period-us "
			       "%d is %lld us: below the 1000 us cpu.max allows",
			       f->p.cpu_quota_pct, f->p.period_us,
			       (long long)quota);
	return 0;
}
