/* Unit test of epmodel's command line (lab/model/mflags.c): each row of
 * MODEL_PARAMS is a flag that lands in its own field, its default is
 * model_defaults', a bad value is refused naming the flag, and the flags
 * lab/model/README.md lists are exactly the table's. */
#include "check.h"
#include "../../lab/model/mflags.h"
#include "../../lab/model/msum.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NPARAMS (0 MODEL_PARAMS(COUNT_ONE))
#define COUNT_ONE(...) + 1

static int parse(struct mflags *f, char *why, size_t len, int argc, ...)
{
	char *argv[16] = { "epmodel" };
	va_list ap;
	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	return mflags_parse(f, argc, argv, why, len);
}

static void test_defaults(void)
{
	struct mflags f;
	struct model_params d;
	char why[256];
	CHECK(parse(&f, why, sizeof(why), 1) == 0);
	model_defaults(&d);
	CHECK(memcmp(&f.p, &d, sizeof(d)) == 0);
	CHECK_EQ_INT(f.nkinds, 3);
	CHECK(f.kinds[0] == RLOCK_RWLOCK && f.kinds[1] == RLOCK_PI_MUTEX &&
	      f.kinds[2] == RLOCK_MUTEX);
	CHECK(strcmp(f.out, ".") == 0 && !f.help);
	CHECK_EQ_INT(cg_quota_us(d.cpu_quota_pct, d.period_us), 5000);
}

/* Every parameter at its maximum, one flag at a time: only its own field
 * moves. */
static void test_each_flag(void)
{
	struct model_params d;
	model_defaults(&d);
	char why[256], flag[64], value[32];
#define ONE(n, lo, hi, def, arg, spec, help) do { \
	struct mflags f; \
	snprintf(flag, sizeof(flag), "--%s", #n); \
	for (char *c = flag + 2; *c; c++) \
		*c = *c == '_' ? '-' : *c; \
	snprintf(value, sizeof(value), "%d", hi); \
	CHECK(parse(&f, why, sizeof(why), 3, flag, value) == 0); \
	CHECK_EQ_INT(f.p.n, hi); \
	struct model_params want = d; \
	want.n = hi; \
	CHECK(memcmp(&f.p, &want, sizeof(want)) == 0); \
	snprintf(value, sizeof(value), "%lld", (long long)(lo) - 1); \
	CHECK(parse(&f, why, sizeof(why), 3, flag, value) < 0); \
	CHECK(strstr(why, flag) != NULL); \
} while (0);
	MODEL_PARAMS(ONE)
#undef ONE
}

static void test_refusals(void)
{
	struct mflags f;
	char why[256];
	CHECK(parse(&f, why, sizeof(why), 3, "--variant", "pi_mutex,rwlock") == 0);
	CHECK(f.nkinds == 2 && f.kinds[0] == RLOCK_PI_MUTEX);
	CHECK(parse(&f, why, sizeof(why), 3, "--variant", "rwlock,spin") < 0);
	CHECK(strstr(why, "--variant") && strstr(why, "'spin'"));
	CHECK(parse(&f, why, sizeof(why), 3, "--variant", "mutex,mutex") < 0);
	CHECK(strstr(why, "twice") != NULL);
	/* 1% of 10 ms is 100 us, under what cpu.max takes */
	CHECK(parse(&f, why, sizeof(why), 5, "--cpu-quota-pct", "1",
		    "--period-us", "10000") < 0);
	CHECK(strstr(why, "--cpu-quota-pct 1 of --period-us 10000") != NULL);
	CHECK(parse(&f, why, sizeof(why), 2, "--duration") < 0);
	CHECK(strstr(why, "'--duration'") != NULL);
	CHECK(parse(&f, why, sizeof(why), 2, "leftover") < 0);
	CHECK(strstr(why, "'leftover'") != NULL);
	CHECK(parse(&f, why, sizeof(why), 2, "--help") == 0 && f.help);
}

static const char *spec_file(const char *name, const char *text)
{
	static char path[4][512];
	static int next;
	char *p = path[next++ % 4];
	const char *tmp = getenv("TEST_TMP");
	snprintf(p, sizeof(path[0]), "%s/%s", tmp ? tmp : P_tmpdir, name);
	FILE *f = fopen(p, "w");
	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
	return p;
}

/* A spec's "model" object goes through the same rows as the flags, in
 * the order given; its refusals name the file and each key. */
static void test_spec(void)
{
	struct mflags f;
	char why[512];
	const char *s = spec_file("model-spec.json",
		"{\"model\": {\"duration_s\": 9, \"producers\": 4}}");
	CHECK(parse(&f, why, sizeof(why), 3, "--spec", s) == 0);
	CHECK(f.p.duration_s == 9 && f.p.producers == 4 && f.p.hold_us == 20);
	CHECK(parse(&f, why, sizeof(why), 5, "--spec", s, "--duration-s", "7")
	      == 0 && f.p.duration_s == 7);
	CHECK(parse(&f, why, sizeof(why), 5, "--duration-s", "7", "--spec", s)
	      == 0 && f.p.duration_s == 9);
	CHECK(parse(&f, why, sizeof(why), 4, "--spec", s, "--resolve") == 0 &&
	      f.resolve);
	json_t *j = mflags_json(&f.p);
	CHECK_EQ_INT(json_object_size(j), NPARAMS);
	CHECK_EQ_INT(json_integer_value(json_object_get(j, "producers")), 4);
	json_decref(j);

	s = spec_file("model-bad.json",
		"{\"model\": {\"nope\": 1, \"cpu\": \"x\", \"tick_us\": 1}}");
	CHECK(parse(&f, why, sizeof(why), 3, "--spec", s) < 0);
	CHECK(strstr(why, "--spec: ") && strstr(why, "model-bad.json: "
		"model.nope: no such parameter; model.cpu: expected an integer; "
		"model.tick_us: 1 out of range 50..1000000"));
	s = spec_file("model-none.json", "{\"scenario\": {}}");
	CHECK(parse(&f, why, sizeof(why), 3, "--spec", s) < 0);
	CHECK(strstr(why, "no \"model\" object") != NULL);
	s = spec_file("model-broken.json", "{\"model\": ");
	CHECK(parse(&f, why, sizeof(why), 3, "--spec", s) < 0);
	CHECK(strstr(why, "model-broken.json:1:") != NULL);
	/* the spec's quota is checked as a flag's is */
	s = spec_file("model-small.json",
		"{\"model\": {\"cpu_quota_pct\": 1, \"period_us\": 10000}}");
	CHECK(parse(&f, why, sizeof(why), 3, "--spec", s) < 0);
	CHECK(strstr(why, "below the 1000 us") != NULL);
}

/* --describe: the parameters' rows only, producers as the lab's
 * senders. */
static void test_describe(void)
{
	json_t *d = mflags_describe();
	json_t *rows = json_object_get(d, "params");
	CHECK_EQ_INT(json_array_size(rows), NPARAMS);
	size_t i;
	json_t *r;
	int spec = 0;
	json_array_foreach(rows, i, r) {
		const char *sp = json_string_value(json_object_get(r, "spec"));
		const char *n = json_string_value(json_object_get(r, "name"));
		if (sp) {
			spec++;
			CHECK(strcmp(n, "producers") == 0 &&
			      strcmp(sp, "senders") == 0);
		}
		CHECK(json_object_size(json_object_get(r, "default")) == 1);
	}
	CHECK_EQ_INT(spec, 1);
	r = json_array_get(rows, 1);
	CHECK(strcmp(json_string_value(json_object_get(r, "name")),
		     "cpu_quota_pct") == 0);
	CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(r,
		"default"), "host")), 5);
	json_decref(d);
}

/* summary.json's "params" has every parameter by its table name. */
static void test_summary_keys(void)
{
	struct model_params p;
	model_defaults(&p);
	json_t *j = msum_json(&p, 2, NULL, 0, "v");
	json_t *params = json_object_get(j, "params");
#define KEY(n, lo, hi, def, arg, spec, help) \
	CHECK_EQ_INT(json_integer_value(json_object_get(params, #n)), p.n);
	MODEL_PARAMS(KEY)
#undef KEY
	json_decref(j);
}

/* lab/model/README.md lists each flag once in its options table ("| `--x`
 * |"), and names no flag epmodel lacks. */
static void test_readme(void)
{
	FILE *f = fopen(check_fixture("../../lab/model/README.md"), "r");
	CHECK(f != NULL);
	if (!f)
		return;
	static char text[1 << 16];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	static const char *const own[] = { "variant", "out", "spec", "resolve",
					   "describe", "help" };
	int rows = 0;
	for (char *p = strstr(text, "| `--"); p; p = strstr(p + 1, "| `--")) {
		char flag[64];
		if (sscanf(p, "| `--%63[a-z-]", flag) != 1)
			continue;
		rows++;
		bool known = false;
		char key[64];
		snprintf(key, sizeof(key), "%s", flag);
		for (char *c = key; *c; c++)
			*c = *c == '-' ? '_' : *c;
#define KNOWN(n, ...) known |= strcmp(key, #n) == 0;
		MODEL_PARAMS(KNOWN)
#undef KNOWN
		for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			known |= strcmp(key, own[i]) == 0;
		if (!known)
			fprintf(stderr, "README.md: --%s is no flag of epmodel\n",
				flag);
		CHECK(known);
	}
	CHECK_EQ_INT(rows, NPARAMS + 6);
	char want[80];
#define LISTED(n, ...) do { \
	snprintf(want, sizeof(want), "| `--%s", #n); \
	for (char *c = want + 5; *c; c++) \
		*c = *c == '_' ? '-' : *c; \
	if (!strstr(text, want)) \
		fprintf(stderr, "README.md: no row for %s\n", want + 2); \
	CHECK(strstr(text, want) != NULL); \
} while (0);
	MODEL_PARAMS(LISTED)
#undef LISTED
}

int main(void)
{
	test_defaults();
	test_each_flag();
	test_refusals();
	test_spec();
	test_describe();
	test_summary_keys();
	test_readme();
	return check_done();
}
