/*
 * opt: one table of a program's settings, from which its config file keys,
 * its long options, its usage text, its defaults, the keys of a JSON
 * object and a description of itself as JSON all come, so that each
 * setting is written once. A descriptor names a key ("flow_idle_ms", whose
 * flag is --flow-idle-ms), its type and range, where its value lives in
 * the caller's struct (an offset) and its default as text, parsed like
 * any other value. A table may have a second profile of defaults (alt:
 * demo-scenario's virtual clock), named by the caller. Messages name no
 * key: the caller knows whether it was a flag or a line of a file, and
 * says so.
 */
#ifndef RELAY_OPT_H
#define RELAY_OPT_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPT_INT,	/* an int within [min, max] */
	OPT_BOOL,	/* a bool: true/false, yes/no, on/off, 1/0 */
	OPT_STR,	/* a string into char[size] */
	OPT_FUNC,	/* what parse() makes of it */
};

struct opt {
	const char *name;	/* the key; the flag is it with '-' for '_' */
	enum opt_type type;
	size_t off;		/* of the value in the caller's struct */
	long min, max;		/* OPT_INT: the range */
	size_t size;		/* OPT_STR: the field's size */
	const char *def;	/* the default, as a value; NULL: none */
	const char *alt;	/* the default in the table's second profile;
				 * NULL: def there too */
	const char *spec;	/* the lab's name for the setting where this
				 * program's differs (lab/README.md) */
	const char *arg;	/* the value in the usage ("N", "FILE") */
	const char *bare;	/* the value of the flag given alone ("true");
				 * NULL: the flag takes one */
	const char *help;	/* the usage's text ('\n' between lines) */
	/* OPT_FUNC: parse value into base (the whole struct: a setting may
	 * be more than one field); 0, or -1 with why. */
	int (*parse)(void *base, const char *value, char *why, size_t whylen);
	unsigned tag;		/* the caller's own (reloadable, say) */
};

/* The descriptor of the key name (spelled as a key: "flow_idle_ms"; a
 * flag is found by getopt_long's index); NULL if none. */
const struct opt *opt_find(const struct opt *t, int n, const char *name);

/* Parse value as o says into the caller's struct at base: 0, or -1 with
 * why ("'x' is not an integer", "5 out of range 10..100"). */
int opt_parse(const struct opt *o, void *base, const char *value, char *why,
	      size_t whylen);

/* Set every setting that has a default (base zeroed first by the caller):
 * 0, or -1 with why naming the key (a table with a bad default). */
int opt_defaults(const struct opt *t, int n, void *base, char *why,
		 size_t whylen);

/* The same with the second profile's defaults where alt is true. */
int opt_defaults_for(const struct opt *t, int n, bool alt, void *base,
		     char *why, size_t whylen);

/* o's default in the second profile (alt true) or the first: NULL if
 * none. */
const char *opt_default(const struct opt *o, bool alt);

/* Set what the JSON object obj names, each key a setting's name and each
 * value of its type (OPT_INT an integer, OPT_BOOL true or false, OPT_STR
 * a string, OPT_FUNC a string or a number). Every key is tried: 0, or -1
 * with why saying each one refused, a line each ("PREFIX.key: why"). */
int opt_json(const struct opt *t, int n, void *base, const json_t *obj,
	     const char *prefix, char *why, size_t whylen);

/* getopt_long's rows for the table, out[i] for t[i] (so that longindex
 * names the descriptor) and a zero row at out[n], each returning val; the
 * flags' names are written to names[len]. 0, or -1 if len is too small. */
int opt_longopts(const struct opt *t, int n, struct option *out, char *names,
		 size_t len, int val);

/* Print each setting: "  --flag ARG  help (default)", the help in a
 * column of its own. */
void opt_usage(FILE *f, const struct opt *t, int n);

/* The same, a default that differs in the second profile given with both
 * profiles' names ("(host 10, virtual 5)"; profiles[0] is def's). */
void opt_usage_profiles(FILE *f, const struct opt *t, int n,
			const char *const profiles[2]);

/* The table as JSON, a row per setting: name, flag, type ("int", "bool",
 * "str"), unit (the name's suffix: pct, us, ms, s, pps; else null), min
 * and max (OPT_INT), default (an object: each profile's, by the names of
 * profiles; profiles[1] NULL for a table of one), spec (if any), help.
 * NULL if out of memory. */
json_t *opt_describe(const struct opt *t, int n,
		     const char *const profiles[2]);

#endif
