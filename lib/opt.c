/*
 * opt: parsing a value by its descriptor, and what getopt and the usage
 * need, from the one table.
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

int opt_defaults(const struct opt *t, int n, void *base, char *why,
		 size_t whylen)
{
	char e[256];
	for (int i = 0; i < n; i++)
		if (t[i].def && opt_parse(&t[i], base, t[i].def, e, sizeof(e)) < 0)
			return why_set(why, whylen, "%s: default: %s", t[i].name,
				       e);
	return 0;
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
		if (t[i].def && !t[i].bare)
			fprintf(f, " (%s)", t[i].def);
		fputc('\n', f);
	}
}
