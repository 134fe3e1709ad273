/* Unit tests of lib/opt.c: a table's values, defaults (in either profile),
 * flags, usage, a JSON object of settings and the table as JSON. */
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "opt.h"

struct settings {
	int idle_ms;
	bool stamps;
	bool loud;
	char path[8];
	int lo, hi;		/* one setting, two fields */
};

static int parse_span(void *base, const char *v, char *why, size_t whylen)
{
	struct settings *s = base;
	if (sscanf(v, "%d-%d", &s->lo, &s->hi) != 2) {
		snprintf(why, whylen, "'%s' is not LO-HI", v);
		return -1;
	}
	return 0;
}

#define F(field) offsetof(struct settings, field)
static const struct opt table[] = {
	{ .name = "idle_ms", .type = OPT_INT, .off = F(idle_ms), .min = 1,
	  .max = 1000, .def = "30", .arg = "N", .help = "idle for this long" },
	{ .name = "stamps", .type = OPT_BOOL, .off = F(stamps), .def = "yes",
	  .arg = "yes|no", .help = "time stamps" },
	{ .name = "loud", .type = OPT_BOOL, .off = F(loud), .bare = "true",
	  .help = "say more" },
	{ .name = "path", .type = OPT_STR, .off = F(path), .size = 8,
	  .arg = "FILE", .help = "where" },
	{ .name = "a_rather_long_setting_name", .type = OPT_FUNC,
	  .parse = parse_span, .def = "1-2", .arg = "LO-HI", .help = "a span\nof two",
	  .tag = 7 },
};
#define N ((int)(sizeof(table) / sizeof(table[0])))

static char why[256];

static int set(struct settings *s, const char *name, const char *value)
{
	why[0] = 0;
	const struct opt *o = opt_find(table, N, name);
	return o ? opt_parse(o, s, value, why, sizeof(why)) : -2;
}

static void test_find(void)
{
	CHECK(opt_find(table, N, "idle_ms") == &table[0]);
	CHECK(opt_find(table, N, "idle-ms") == NULL);	/* a flag's spelling */
	CHECK(opt_find(table, N, "a_rather_long_setting_name") == &table[4]);
	CHECK(opt_find(table, N, "idle") == NULL);
	CHECK(opt_find(table, N, "idle_ms_") == NULL);
	CHECK(opt_find(table, N, "idle-ms=") == NULL);
	CHECK(opt_find(table, N, "") == NULL);
	CHECK_EQ_INT(opt_find(table, N, "a_rather_long_setting_name")->tag, 7);
}

static void test_parse(void)
{
	struct settings s = { 0 };
	CHECK_EQ_INT(set(&s, "idle_ms", "1000"), 0);
	CHECK_EQ_INT(s.idle_ms, 1000);
	CHECK_EQ_INT(set(&s, "idle_ms", "1001"), -1);
	CHECK(strcmp(why, "1001 out of range 1..1000") == 0);
	CHECK_EQ_INT(set(&s, "idle_ms", "0"), -1);
	CHECK_EQ_INT(set(&s, "idle_ms", "12x"), -1);
	CHECK(strcmp(why, "'12x' is not an integer") == 0);
	CHECK_EQ_INT(set(&s, "idle_ms", ""), -1);
	CHECK_EQ_INT(set(&s, "idle_ms", "99999999999999999999"), -1);
	CHECK(strstr(why, "not an integer") != NULL);
	CHECK_EQ_INT(s.idle_ms, 1000);	/* a refused value changes nothing */

	const char *yes[] = { "true", "yes", "on", "1" };
	const char *no[] = { "false", "no", "off", "0" };
	for (int i = 0; i < 4; i++) {
		CHECK_EQ_INT(set(&s, "stamps", yes[i]), 0);
		CHECK(s.stamps);
		CHECK_EQ_INT(set(&s, "stamps", no[i]), 0);
		CHECK(!s.stamps);
	}
	CHECK_EQ_INT(set(&s, "stamps", "Yes"), -1);
	CHECK(strcmp(why, "'Yes' is not a boolean (true/false, yes/no, "
		     "on/off, 1/0)") == 0);

	CHECK_EQ_INT(set(&s, "path", "/a/b/cd"), 0);
	CHECK(strcmp(s.path, "/a/b/cd") == 0);
	CHECK_EQ_INT(set(&s, "path", "/a/b/cde"), -1);
	CHECK(strstr(why, "longer than 7 bytes") != NULL);
	CHECK(strcmp(s.path, "/a/b/cd") == 0);

	CHECK_EQ_INT(set(&s, "a_rather_long_setting_name", "3-9"), 0);
	CHECK_EQ_INT(s.lo, 3);
	CHECK_EQ_INT(s.hi, 9);
	CHECK_EQ_INT(set(&s, "a_rather_long_setting_name", "3"), -1);
	CHECK(strcmp(why, "'3' is not LO-HI") == 0);
}

static void test_defaults(void)
{
	struct settings s;
	memset(&s, 0, sizeof(s));
	CHECK_EQ_INT(opt_defaults(table, N, &s, why, sizeof(why)), 0);
	CHECK_EQ_INT(s.idle_ms, 30);
	CHECK(s.stamps);
	CHECK(!s.loud);
	CHECK(s.path[0] == 0);
	CHECK_EQ_INT(s.lo, 1);
	CHECK_EQ_INT(s.hi, 2);

	struct opt bad = table[0];
	bad.def = "5000";
	CHECK_EQ_INT(opt_defaults(&bad, 1, &s, why, sizeof(why)), -1);
	CHECK(strcmp(why, "idle_ms: default: 5000 out of range 1..1000") == 0);
}

static void test_longopts(void)
{
	struct option rows[N + 1];
	char names[128];
	CHECK_EQ_INT(opt_longopts(table, N, rows, names, 40, 'k'), -1);
	CHECK_EQ_INT(opt_longopts(table, N, rows, names, sizeof(names), 'k'), 0);
	CHECK(strcmp(rows[0].name, "idle-ms") == 0);
	CHECK(strcmp(rows[4].name, "a-rather-long-setting-name") == 0);
	CHECK_EQ_INT(rows[0].has_arg, required_argument);
	CHECK_EQ_INT(rows[2].has_arg, no_argument);
	CHECK_EQ_INT(rows[1].val, 'k');
	CHECK(rows[1].flag == NULL);
	CHECK(rows[N].name == NULL);

	/* getopt_long with them: the index names the descriptor */
	char *argv[] = { "prog", "--idle-ms", "50", "--loud",
			 "--a-rather-long-setting-name=4-5", "--stamps", "no",
			 NULL };
	struct settings s = { 0 };
	int idx, o, seen = 0;
	optind = 0;
	opterr = 0;
	while ((o = getopt_long(7, argv, ":", rows, &idx)) != -1) {
		CHECK_EQ_INT(o, 'k');
		const struct opt *d = &table[idx];
		CHECK_EQ_INT(opt_parse(d, &s, optarg ? optarg : d->bare, why,
				       sizeof(why)), 0);
		seen++;
	}
	CHECK_EQ_INT(seen, 4);
	CHECK_EQ_INT(s.idle_ms, 50);
	CHECK(s.loud);
	CHECK(!s.stamps);
	CHECK_EQ_INT(s.lo, 4);
	CHECK_EQ_INT(s.hi, 5);
}

/* t's usage (with profiles' defaults where profiles is not NULL) is want. */
static void check_usage(const struct opt *t, int n,
			const char *const profiles[2], const char *want)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (profiles)
		opt_usage_profiles(f, t, n, profiles);
	else
		opt_usage(f, t, n);
	fclose(f);
	CHECK(strcmp(text, want) == 0);
	if (strcmp(text, want) != 0)
		fprintf(stderr, "usage:\n%s", text);
	free(text);
}

static void test_usage(void)
{
	check_usage(table, N, NULL,
		"  --idle-ms N          idle for this long (30)\n"
		"  --stamps yes|no      time stamps (yes)\n"
		"  --loud               say more\n"
		"  --path FILE          where\n"
		"  --a-rather-long-setting-name LO-HI\n"
		"                       a span\n"
		"                       of two (1-2)\n");
}

/* A table with a second profile: rate_pps and cpu_quota_pct differ
 * there, threads has the lab's name senders. */
struct scene {
	int rate_pps, cpu_quota_pct, threads;
	bool on;
	char name[8];
};
#define S(field) offsetof(struct scene, field)
static const struct opt scene[] = {
	{ .name = "rate_pps", .type = OPT_INT, .off = S(rate_pps), .min = 1,
	  .max = 100000, .def = "2000", .alt = "30000", .arg = "N",
	  .help = "datagrams\nper second" },
	{ .name = "cpu_quota_pct", .type = OPT_INT, .off = S(cpu_quota_pct),
	  .min = 1, .max = 100, .def = "10", .alt = "5", .arg = "PCT",
	  .help = "quota" },
	{ .name = "threads", .type = OPT_INT, .off = S(threads), .min = 1,
	  .max = 64, .def = "2", .alt = "2", .spec = "senders", .arg = "N",
	  .help = "threads" },
	{ .name = "on", .type = OPT_BOOL, .off = S(on), .def = "no",
	  .help = "on" },
	{ .name = "name", .type = OPT_STR, .off = S(name), .size = 8,
	  .help = "a name" },
};
#define NSCENE ((int)(sizeof(scene) / sizeof(scene[0])))
static const char *const clocks[2] = { "host", "virtual" };

static void test_profiles(void)
{
	struct scene s = { 0 };
	CHECK_EQ_INT(opt_defaults_for(scene, NSCENE, true, &s, why,
				      sizeof(why)), 0);
	CHECK(s.rate_pps == 30000 && s.cpu_quota_pct == 5 && s.threads == 2);
	CHECK_EQ_INT(opt_defaults_for(scene, NSCENE, false, &s, why,
				      sizeof(why)), 0);
	CHECK(s.rate_pps == 2000 && s.cpu_quota_pct == 10 && s.threads == 2);
	/* no alt: the default in both */
	CHECK(strcmp(opt_default(&scene[3], true), "no") == 0);
	CHECK(opt_default(&scene[4], true) == NULL);
	CHECK(opt_default(&table[0], true) == table[0].def);

	struct opt bad = scene[0];
	bad.alt = "0";
	CHECK_EQ_INT(opt_defaults_for(&bad, 1, true, &s, why, sizeof(why)), -1);
	CHECK(strcmp(why, "rate_pps: default: 0 out of range 1..100000") == 0);
	CHECK_EQ_INT(opt_defaults_for(&bad, 1, false, &s, why, sizeof(why)), 0);
}

static json_t *parsed(const char *text)
{
	json_t *j = json_loads(text, 0, NULL);
	CHECK(j != NULL);
	return j;
}

static void test_json(void)
{
	struct scene s = { .rate_pps = 1, .cpu_quota_pct = 1, .threads = 1 };
	json_t *j = parsed("{\"rate_pps\": 3000, \"on\": true, "
			   "\"name\": \"ab\"}");
	CHECK_EQ_INT(opt_json(scene, NSCENE, &s, j, "scenario", why,
			      sizeof(why)), 0);
	CHECK(s.rate_pps == 3000 && s.on && strcmp(s.name, "ab") == 0);
	CHECK(s.cpu_quota_pct == 1 && s.threads == 1);	/* not named */
	json_decref(j);

	/* every key is tried, and each refusal named on a line of its own;
	 * the keys that were right are set */
	j = parsed("{\"nope\": 1, \"rate_pps\": \"5\", \"cpu_quota_pct\": 0, "
		   "\"threads\": 7, \"on\": 1, \"name\": 5}");
	CHECK_EQ_INT(opt_json(scene, NSCENE, &s, j, "scenario", why,
			      sizeof(why)), -1);
	const char *want =
		"scenario.nope: no such parameter\n"
		"scenario.rate_pps: expected an integer\n"
		"scenario.cpu_quota_pct: 0 out of range 1..100\n"
		"scenario.on: expected true or false\n"
		"scenario.name: expected a string";
	CHECK(strcmp(why, want) == 0);
	if (strcmp(why, want) != 0)
		fprintf(stderr, "why:\n%s\n", why);
	CHECK(s.threads == 7 && s.rate_pps == 3000 && s.cpu_quota_pct == 1);
	/* a short buffer: cut, still a failure */
	char small[20];
	CHECK_EQ_INT(opt_json(scene, NSCENE, &s, j, "scenario", small,
			      sizeof(small)), -1);
	CHECK(strncmp(small, "scenario.nope: no ", 18) == 0);
	CHECK_EQ_INT(opt_json(scene, NSCENE, &s, j, "scenario", NULL, 0), -1);
	json_decref(j);

	j = parsed("[1]");
	CHECK_EQ_INT(opt_json(scene, NSCENE, &s, j, "scenario", why,
			      sizeof(why)), -1);
	CHECK(strcmp(why, "scenario: expected an object") == 0);
	json_decref(j);

	/* OPT_FUNC takes strings and numbers, as text */
	struct settings t = { 0 };
	j = parsed("{\"a_rather_long_setting_name\": \"4-8\"}");
	CHECK_EQ_INT(opt_json(table, N, &t, j, "x", why, sizeof(why)), 0);
	CHECK(t.lo == 4 && t.hi == 8);
	json_decref(j);
	j = parsed("{\"a_rather_long_setting_name\": 2.5}");
	CHECK_EQ_INT(opt_json(table, N, &t, j, "x", why, sizeof(why)), -1);
	CHECK(strcmp(why, "x.a_rather_long_setting_name: '2.5' is not LO-HI")
	      == 0);
	json_decref(j);
}

static void test_describe(void)
{
	json_t *d = opt_describe(scene, NSCENE, clocks);
	CHECK(json_is_array(d) && json_array_size(d) == NSCENE);
	char *text = json_dumps(json_array_get(d, 0), JSON_SORT_KEYS);
	const char *want = "{\"default\": {\"host\": 2000, \"virtual\": 30000}, "
		"\"flag\": \"--rate-pps\", \"help\": \"datagrams per second\", "
		"\"max\": 100000, \"min\": 1, \"name\": \"rate_pps\", "
		"\"type\": \"int\", \"unit\": \"pps\"}";
	CHECK(text && strcmp(text, want) == 0);
	if (text && strcmp(text, want) != 0)
		fprintf(stderr, "described: %s\n", text);
	free(text);
	json_t *r = json_array_get(d, 2);
	CHECK(json_is_null(json_object_get(r, "unit")));
	CHECK(strcmp(json_string_value(json_object_get(r, "spec")),
		     "senders") == 0);
	r = json_array_get(d, 3);
	CHECK(json_is_false(json_object_get(json_object_get(r, "default"),
					    "virtual")));
	CHECK(strcmp(json_string_value(json_object_get(r, "type")), "bool")
	      == 0);
	CHECK(json_object_get(r, "min") == NULL);
	r = json_array_get(d, 4);
	CHECK(json_is_null(json_object_get(json_object_get(r, "default"),
					   "host")));
	json_decref(d);

	/* one profile; an OPT_FUNC row is a string */
	const char *const one[2] = { "host", NULL };
	d = opt_describe(table, N, one);
	r = json_array_get(d, 4);
	CHECK(json_object_size(json_object_get(r, "default")) == 1);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(r,
		"default"), "host")), "1-2") == 0);
	CHECK(strcmp(json_string_value(json_object_get(r, "type")), "str")
	      == 0);
	CHECK(strcmp(json_string_value(json_object_get(r, "help")),
		     "a span of two") == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(d, 0),
		"unit")), "ms") == 0);
	json_decref(d);
}

static void test_usage_profiles(void)
{
	check_usage(scene, 3, clocks,
		"  --rate-pps N         datagrams\n"
		"                       per second (host 2000, virtual 30000)\n"
		"  --cpu-quota-pct PCT  quota (host 10, virtual 5)\n"
		"  --threads N          threads (2)\n");
}

int main(void)
{
	test_find();
	test_parse();
	test_defaults();
	test_longopts();
	test_usage();
	test_profiles();
	test_json();
	test_describe();
	test_usage_profiles();
	return check_done();
}
