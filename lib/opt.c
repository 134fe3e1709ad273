/*
 * opt: parsing a value by its descriptor, and what getopt, the usage, a
 * JSON object of settings and the table's description need, from the one
 * table.
 */
#include "opt.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "why.h"

/* The usage's help column: "  --flag ARG" longer than this gets a line of
 * its own. */
#define OPT_HELP_COL	23

const struct opt *opt_find(const struct opt *t, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };
	for (int i = 0; i < 4; i++) {
		if (strcmp(v, yes[i]) == 0)
			return *out = true, 0;
		if (strcmp(v, no[i]) == 0)
			return *out = false, 0;
	}
	return -1;
}

int opt_parse(const struct opt *o, void *base, const char *value, char *why,
	      size_t whylen)
{
	char *field = (char *)base + o->off;
	switch (o->type) {
	case OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(value, &end, 10);
		if (!*value || *end || errno)
			return why_set(why, whylen, "'%s' is not an integer",
				       value);
		if (v < o->min || v > o->max)
			return why_set(why, whylen, "%ld out of range %ld..%ld",
				       v, o->min, o->max);
		*(int *)field = (int)v;
		return 0;
	}
	case OPT_BOOL:
		if (parse_bool(value, (bool *)field) < 0)
			return why_set(why, whylen, "'%s' is not a boolean "
				       "(true/false, yes/no, on/off, 1/0)",
				       value);
		return 0;
	case OPT_STR:
		if (strlen(value) >= o->size)
			return why_set(why, whylen, "'%.40s...' is longer than "
				       "%zu bytes", value, o->size - 1);
		strcpy(field, value);
		return 0;
	case OPT_FUNC:
		return o->parse(base, value, why, whylen);
	}
	return why_set(why, whylen, "no type %d", (int)o->type);
}

const char *opt_default(const struct opt *o, bool alt)
{
	return alt && o->alt ? o->alt : o->def;
}

int opt_defaults_for(const struct opt *t, int n, bool alt, void *base,
		     char *why, size_t whylen)
{
	char e[256];
	for (int i = 0; i < n; i++) {
		const char *d = opt_default(&t[i], alt);
		if (d && opt_parse(&t[i], base, d, e, sizeof(e)) < 0)
			return why_set(why, whylen, "%s: default: %s", t[i].name,
				       e);
	}
	return 0;
}

int opt_defaults(const struct opt *t, int n, void *base, char *why,
		 size_t whylen)
{
	return opt_defaults_for(t, n, false, base, why, whylen);
}

/* A JSON value as the text opt_parse takes for o, or NULL with what was
 * expected instead. */
static const char *json_text(const struct opt *o, const json_t *v,
			     char *buf, size_t len, const char **expected)
{
	switch (o->type) {
	case OPT_INT:
		*expected = "an integer";
		break;
	case OPT_BOOL:
		*expected = "true or false";
		if (json_is_boolean(v))
			return json_is_true(v) ? "true" : "false";
		return NULL;
	case OPT_STR:
		*expected = "a string";
		return json_string_value(v);
	case OPT_FUNC:
		*expected = "a string or a number";
		if (json_is_string(v))
			return json_string_value(v);
		if (json_is_real(v)) {
			snprintf(buf, len, "%.17g", json_real_value(v));
			return buf;
		}
		break;
	}
	if (!json_is_integer(v))
		return NULL;
	snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	return buf;
}

int opt_json(const struct opt *t, int n, void *base, const json_t *obj,
	     const char *prefix, char *why, size_t whylen)
{
	if (!json_is_object(obj))
		return why_set(why, whylen, "%s: expected an object", prefix);
	size_t used = 0;
	int bad = 0;
	/* jansson iterates a const object only through a cast */
	json_t *o = (json_t *)obj;
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		const struct opt *d = opt_find(t, n, key);
		char text[32], e[256];
		const char *value = NULL, *expected = NULL;
		if (!d)
			snprintf(e, sizeof(e), "no such parameter");
		else if (!(value = json_text(d, v, text, sizeof(text),
					     &expected)))
			snprintf(e, sizeof(e), "expected %s", expected);
		else if (opt_parse(d, base, value, e, sizeof(e)) == 0)
			continue;
		if (why && used < whylen)
			used += (size_t)snprintf(why + used, whylen - used,
						 "%s%s.%s: %s", bad ? "\n" : "",
						 prefix, key, e);
		bad++;
	}
	return bad ? -1 : 0;
}

int opt_longopts(const struct opt *t, int n, struct option *out, char *names,
		 size_t len, int val)
{
	size_t used = 0;
	for (int i = 0; i < n; i++) {
		size_t l = strlen(t[i].name) + 1;
		if (used + l > len)
			return -1;
		char *flag = names + used;
		for (size_t k = 0; k < l; k++)
			flag[k] = t[i].name[k] == '_' ? '-' : t[i].name[k];
		used += l;
		out[i] = (struct option){ flag, t[i].bare ? no_argument :
					  required_argument, NULL, val };
	}
	out[n] = (struct option){ 0 };
	return 0;
}

void opt_usage(FILE *f, const struct opt *t, int n)
{
	opt_usage_profiles(f, t, n, NULL);
}

void opt_usage_profiles(FILE *f, const struct opt *t, int n,
			const char *const profiles[2])
{
	for (int i = 0; i < n; i++) {
		int col = fprintf(f, "  --");
		for (const char *p = t[i].name; *p; p++, col++)
			fputc(*p == '_' ? '-' : *p, f);
		if (!t[i].bare)
			col += fprintf(f, " %s", t[i].arg ? t[i].arg : "VALUE");
		if (col >= OPT_HELP_COL) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%*s", OPT_HELP_COL - col, "");
		for (const char *p = t[i].help; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fprintf(f, "%*s", OPT_HELP_COL, "");
		}
		const char *alt = profiles ? opt_default(&t[i], true) : NULL;
		if (t[i].def && alt && strcmp(alt, t[i].def) != 0)
			fprintf(f, " (%s %s, %s %s)", profiles[0], t[i].def,
				profiles[1], alt);
		else if (t[i].def && !t[i].bare)
			fprintf(f, " (%s)", t[i].def);
		fputc('\n', f);
	}
}

/* The unit a name ends in, by the lab's convention (lab/README.md), or
 * NULL. */
static const char *unit(const char *name)
{
	static const char *const units[] = { "pct", "us", "ms", "s", "pps" };
	const char *u = strrchr(name, '_');
	for (size_t i = 0; u && i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(u + 1, units[i]) == 0)
			return units[i];
	return NULL;
}

/* A default's text as the JSON value of o's type. */
static json_t *json_value(const struct opt *o, const char *text)
{
	bool b;
	if (!text)
		return json_null();
	if (o->type == OPT_INT)
		return json_integer(strtol(text, NULL, 10));
	if (o->type == OPT_BOOL && parse_bool(text, &b) == 0)
		return json_boolean(b);
	return json_string(text);
}

json_t *opt_describe(const struct opt *t, int n,
		     const char *const profiles[2])
{
	static const char *const types[] = { [OPT_INT] = "int",
		[OPT_BOOL] = "bool", [OPT_STR] = "str", [OPT_FUNC] = "str" };
	json_t *rows = json_array();
	for (int i = 0; rows && i < n; i++) {
		char flag[128], help[1024];
		snprintf(flag, sizeof(flag), "--%s", t[i].name);
		for (char *c = flag + 2; *c; c++)
			*c = *c == '_' ? '-' : *c;
		snprintf(help, sizeof(help), "%s", t[i].help);
		for (char *c = help; *c; c++)
			*c = *c == '\n' ? ' ' : *c;
		json_t *def = json_object();
		for (int k = 0; k < 2 && profiles[k]; k++)
			json_object_set_new(def, profiles[k], json_value(
				&t[i], opt_default(&t[i], k == 1)));
		const char *u = unit(t[i].name);
		json_t *row = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}",
			"name", t[i].name, "flag", flag,
			"type", types[t[i].type],
			"unit", u ? json_string(u) : json_null(),
			"default", def, "help", help);
		if (row && t[i].type == OPT_INT) {
			json_object_set_new(row, "min", json_integer(t[i].min));
			json_object_set_new(row, "max", json_integer(t[i].max));
		}
		if (row && t[i].spec)
			json_object_set_new(row, "spec", json_string(t[i].spec));
		if (!row || json_array_append_new(rows, row) < 0) {
			json_decref(rows);
			return NULL;
		}
	}
	return rows;
}
