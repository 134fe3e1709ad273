/* Unit tests of lib/opt.c: a table's values, defaults, flags and usage. */
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

static void test_usage(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	opt_usage(f, table, N);
	fclose(f);
	const char *want =
		"  --idle-ms N          idle for this long (30)\n"
		"  --stamps yes|no      time stamps (yes)\n"
		"  --loud               say more\n"
		"  --path FILE          where\n"
		"  --a-rather-long-setting-name LO-HI\n"
		"                       a span\n"
		"                       of two (1-2)\n";
	CHECK(strcmp(text, want) == 0);
	if (strcmp(text, want) != 0)
		fprintf(stderr, "usage:\n%s", text);
	free(text);
}

int main(void)
{
	test_find();
	test_parse();
	test_defaults();
	test_longopts();
	test_usage();
	return check_done();
}
