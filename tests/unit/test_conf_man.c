/*
 * relay(8) against the key table (conf_opts): every key has an entry in
 * OPTIONS (a .TP whose tag names its flag) that says its default, and every
 * --flag the page names anywhere is a key or one of main.c's own. So the
 * flags, the config keys and the man page cannot drift apart.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "check.h"
#include "conf.h"

static const char *const own[] = { "config", "check-config", "help",
				   "version" };

static char page[1 << 20];

/* The flag a table key is given as. */
static void flag_of(const char *key, char *out, size_t len)
{
	snprintf(out, len, "%s", key);
	for (char *p = out; *p; p++)
		if (*p == '_')
			*p = '-';
}

static bool known_flag(const char *flag)
{
	char f[64];
	for (int i = 0; i < conf_nopts; i++) {
		flag_of(conf_opts[i].name, f, sizeof(f));
		if (strcmp(f, flag) == 0)
			return true;
	}
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(own[i], flag) == 0)
			return true;
	return false;
}

/* The next "\-\-name" at or after *p, as "name" (its "\-" unescaped);
 * false when there is none before end. */
static bool next_flag(const char **p, const char *end, char *out, size_t len)
{
	const char *s = strstr(*p, "\\-\\-");
	if (!s || s >= end)
		return false;
	s += 4;
	size_t n = 0;
	while (s < end && n + 1 < len) {
		if (s[0] == '\\' && s[1] == '-')
			out[n++] = '-', s += 2;
		else if (islower((unsigned char)*s) || isdigit((unsigned char)*s))
			out[n++] = *s++;
		else
			break;
	}
	out[n] = 0;
	*p = s;
	return true;
}

/* The text of OPTIONS' entry for flag, its lines joined by spaces (man
 * breaks lines anywhere), into out; false when there is none. */
static bool entry(const char *opts, const char *opts_end, const char *flag,
		  char *out, size_t len)
{
	for (const char *tp = strstr(opts, "\n.TP\n"); tp && tp < opts_end;
	     tp = strstr(tp + 1, "\n.TP\n")) {
		const char *tag = tp + 5, *tag_end = strchr(tag, '\n');
		const char *q = tag;
		char f[64];
		bool match = false;
		while (next_flag(&q, tag_end, f, sizeof(f)))
			match |= strcmp(f, flag) == 0;
		if (!match)
			continue;
		const char *body = tag_end + 1, *stop = body;
		while (*stop && strncmp(stop, ".TP\n", 4) && strncmp(stop, ".SH", 3))
			stop = strchr(stop, '\n') ? strchr(stop, '\n') + 1 :
						    stop + strlen(stop);
		size_t n = 0;
		for (const char *c = body; c < stop && n + 1 < len; c++)
			out[n++] = *c == '\n' ? ' ' : *c;
		out[n] = 0;
		return true;
	}
	return false;
}

int main(void)
{
	const char *path = check_fixture("../../server/relay.8");
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s\n", path);
		return 1;
	}
	size_t n = fread(page, 1, sizeof(page) - 1, f);
	fclose(f);
	page[n] = 0;
	const char *opts = strstr(page, "\n.SH OPTIONS\n");
	CHECK(opts != NULL);
	if (!opts)
		return check_done();
	const char *opts_end = strstr(opts + 1, "\n.SH ");

	/* every key: an entry, with its default */
	for (int i = 0; i < conf_nopts; i++) {
		const struct opt *o = &conf_opts[i];
		char flag[64], text[8192], want[128];
		flag_of(o->name, flag, sizeof(flag));
		bool has = entry(opts, opts_end, flag, text, sizeof(text));
		CHECK(has);
		if (!has) {
			fprintf(stderr, "relay.8: no OPTIONS entry for --%s\n", flag);
			continue;
		}
		if (!o->def)
			continue;
		snprintf(want, sizeof(want), "default %s", o->def);
		CHECK(strstr(text, want) != NULL);
		if (!strstr(text, want))
			fprintf(stderr, "relay.8: --%s does not say '%s': %s\n",
				flag, want, text);
	}
	/* every flag the page names is one */
	const char *p = page;
	char flag[64];
	while (next_flag(&p, page + n, flag, sizeof(flag))) {
		CHECK(known_flag(flag));
		if (!known_flag(flag))
			fprintf(stderr, "relay.8: names --%s, which relay does "
				"not have\n", flag);
	}
	return check_done();
}
