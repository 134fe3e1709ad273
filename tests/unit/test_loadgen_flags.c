/* Unit test of loadgen's flag table against loadgen(1): every flag of the
 * table (and of merge) is in the man page, with its default where it has
 * one, and every flag the man page names is one loadgen takes. */
#include "check.h"
#include "../../loadgen/merge.h"
#include "../../loadgen/opts.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/* The man page with roff's "\-" as "-" and without its font changes
 * ("\fB"), cut into paragraphs at the macros that start one (.TP .PP
 * .IP .SH). */
static char *man;
static char *para[512];
static int npara;

static void load(void)
{
	FILE *f = fopen(check_fixture("../../loadgen/loadgen.1"), "r");
	CHECK(f != NULL);
	if (!f)
		exit(check_done());
	static char text[1 << 17];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	CHECK(n > 0 && n < sizeof(text) - 1);
	man = text;
	char *w = text;
	for (size_t i = 0; i < n; i++) {
		if (text[i] == '\\' && text[i + 1] == 'f' && text[i + 2]) {
			i += 2;
			continue;
		}
		if (text[i] == '\\' && text[i + 1] == '-')
			i++;
		*w++ = text[i];
	}
	*w = 0;
	para[npara++] = text;
	for (char *p = text; (p = strchr(p, '\n')) && npara < 512;) {
		*p++ = 0;
		if (!strncmp(p, ".TP", 3) || !strncmp(p, ".PP", 3) ||
		    !strncmp(p, ".IP", 3) || !strncmp(p, ".SH", 3))
			para[npara++] = p;
		else
			p[-1] = ' ';	/* the paragraph goes on */
	}
}

/* word in s, not inside a longer flag or word. */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = s; (p = strstr(p, word)); p++) {
		bool start = p == s || !(isalnum((unsigned char)p[-1]) ||
					 p[-1] == '-');
		bool end = !(isalnum((unsigned char)p[n]) || p[n] == '-');
		if (start && end)
			return true;
	}
	return false;
}

/* The paragraph documents d as the default: "default D", "D (default)"
 * or "D (the default)". */
static bool says_default(const char *s, const char *d)
{
	char a[96], b[96], c[96];
	snprintf(a, sizeof(a), "default %s", d);
	snprintf(b, sizeof(b), "%s (default)", d);
	snprintf(c, sizeof(c), "%s (the default)", d);
	return has_word(s, a) || strstr(s, b) || strstr(s, c);
}

static bool known(const char *name, size_t n)
{
	for (int i = 0; i < opts_ntable; i++)
		if (strlen(opts_table[i].name) == n &&
		    !strncmp(opts_table[i].name, name, n))
			return true;
	for (const struct option *o = merge_longopts; o->name; o++)
		if (strlen(o->name) == n && !strncmp(o->name, name, n))
			return true;
	return false;
}

static void check_flag(const char *name, const char *dflt)
{
	char flag[64];
	snprintf(flag, sizeof(flag), "--%s", name);
	bool documented = false, with_default = !dflt;
	for (int i = 0; i < npara; i++) {
		if (!has_word(para[i], flag))
			continue;
		documented = true;
		with_default = with_default || says_default(para[i], dflt);
	}
	if (!documented)
		fprintf(stderr, "%s is not in loadgen.1\n", flag);
	if (documented && !with_default)
		fprintf(stderr, "loadgen.1 does not give %s's default %s\n",
			flag, dflt);
	CHECK(documented && with_default);
}

static void test_table_in_man(void)
{
	for (int i = 0; i < opts_ntable; i++)
		check_flag(opts_table[i].name, opts_table[i].def);
	for (const struct option *o = merge_longopts; o->name; o++)
		check_flag(o->name, NULL);
}

static void test_man_in_table(void)
{
	for (int i = 0; i < npara; i++)
		for (const char *p = para[i]; (p = strstr(p, "--")); p += 2) {
			size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");
			if (!n || (p > para[i] && isalnum((unsigned char)p[-1])))
				continue;
			if (!known(p + 2, n))
				fprintf(stderr, "loadgen.1 names --%.*s, which "
					"loadgen does not take\n", (int)n, p + 2);
			CHECK(known(p + 2, n));
		}
}

/* What opts_defaults sets is the table's defaults, as the flags would. */
static void test_defaults(void)
{
	struct opts o;
	opts_defaults(&o);
	CHECK(o.duration_s == 10 && o.threads == 1 && o.size == 64);
	CHECK(o.period_us == 100000 && o.timeout_ms == 2000);
	CHECK(o.window_ms == 100 && o.pause_ms == 500 && o.repeat == 2);
	CHECK(!o.quota_threads && !o.epoll_timer && o.spin_us == 0);
	CHECK(o.quota_pct < 0 && o.probe && o.progress == -1 && o.flows == 0);
	CHECK(!o.search && o.resolution_pct == 5 && o.searches == 1);
	CHECK(o.service_us == 0);
}

int main(void)
{
	load();
	test_table_in_man();
	test_man_in_table();
	test_defaults();
	return check_done();
}
