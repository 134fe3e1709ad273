/*
 * labspec FILE KEY[.KEY]...: print one value of a run spec (spec.json) for
 * a guest's shell script, which has no JSON reader of its own: a number or
 * a string on one line, an array one element a line. A KEY of "*" takes
 * every element of an array, so "steps.*.meets_slo" prints each step's
 * verdict, one a line. Objects and missing keys are errors, so a script
 * never runs on a guess.
 *
 * Exit status: 0 printed; 64 bad command line; 65 the key is missing or
 * names an object; 66 the file cannot be read or is not JSON.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>

static int print_scalar(const json_t *v)
{
	if (json_is_integer(v))
		printf("%lld\n", (long long)json_integer_value(v));
	else if (json_is_real(v))
		printf("%.17g\n", json_real_value(v));
	else if (json_is_string(v) && !strchr(json_string_value(v), '\n'))
		printf("%s\n", json_string_value(v));
	else if (json_is_boolean(v))
		printf("%s\n", json_is_true(v) ? "true" : "false");
	else
		return -1;
	return 0;
}

static int print_path(const json_t *v, const char *keys);

/* Each element of the array a: what the path REST names under it, or
 * with REST NULL the element itself, a scalar. */
static int print_each(const json_t *a, const char *rest)
{
	size_t i;
	json_t *x;
	int rc = 0;
	json_array_foreach(a, i, x)
		if ((rest ? print_path(x, rest) : print_scalar(x)) < 0)
			rc = -1;
	return rc;
}

/* What the path KEYS names under v: a scalar, or an array of them one a
 * line; -1 when any of it is not there or not printable. */
static int print_path(const json_t *v, const char *keys)
{
	if (!v)
		return -1;
	if (!*keys)
		return json_is_array(v) ? print_each(v, NULL) : print_scalar(v);
	size_t n = strcspn(keys, ".");
	const char *rest = keys[n] ? keys + n + 1 : keys + n;
	if (n == 1 && keys[0] == '*')
		return json_is_array(v) ? print_each(v, rest) : -1;
	return print_path(json_object_getn(v, keys, n), rest);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: labspec FILE KEY[.KEY]...\n");
		return EX_USAGE;
	}
	json_error_t e;
	json_t *root = json_load_file(argv[1], JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		fprintf(stderr, "labspec: %s:%d: %s\n", argv[1], e.line, e.text);
		return EX_NOINPUT;
	}
	int rc = print_path(root, argv[2]);
	if (rc < 0)
		fprintf(stderr, "labspec: %s: %s: no such key, or not a number, a one-line string "
			"or an array of them\n", argv[1], argv[2]);
	json_decref(root);
	return rc < 0 ? EX_DATAERR : 0;
}
