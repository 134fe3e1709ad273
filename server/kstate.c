/*
 * kstate: the kernel-markers rows, parsed, then answered from a BTF that
 * libbpf parsed. Only the top-level members of a struct are looked at,
 * as relay-preflight's reading of bpftool's dump does, so that both give
 * the same answer for the same BTF.
 */
#include "kstate.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "why.h"

const char kstate_markers[] =
#include "kernel_markers.h"
	;

#define ROWS_MAX	64
#define FIELD_MAX	64
#define RT_FACT		"preempt_rt"

enum row_kind { ROW_FACT, ROW_VERDICT };

/* fact NAME STRUCT MEMBER VALUE, verdict NAME FACT VALUE VERDICT: the
 * four fields after the kind, in that order. */
struct row {
	enum row_kind kind;
	char f[4][FIELD_MAX];
};

/* Split markers into rows; "markers" rows are preflight's alone. */
static int parse(const char *text, struct row *rows, int *nrows, char *err,
		 size_t errlen)
{
	int line = 0;
	*nrows = 0;
	for (const char *p = text; *p; ) {
		size_t len = strcspn(p, "\n");
		char buf[512], *save, *tok[6];
		int n = 0;
		line++;
		if (len >= sizeof(buf))
			return why_set(err, errlen, "kernel-markers:%d: longer than "
				       "%zu bytes", line, sizeof(buf) - 1);
		memcpy(buf, p, len);
		buf[len] = 0;
		p += len + (p[len] == '\n');
		buf[strcspn(buf, "#")] = 0;
		for (char *t = strtok_r(buf, " \t", &save); t && n < 6;
		     t = strtok_r(NULL, " \t", &save))
			tok[n++] = t;
		if (!n || strcmp(tok[0], "markers") == 0)
			continue;
		bool fact = strcmp(tok[0], "fact") == 0;
		if (!fact && strcmp(tok[0], "verdict") != 0)
			return why_set(err, errlen, "kernel-markers:%d: '%s' is not "
				       "a row (fact, markers or verdict)", line,
				       tok[0]);
		if (n != 5)
			return why_set(err, errlen, "kernel-markers:%d: a %s row "
				       "has 4 fields after its kind", line, tok[0]);
		if (*nrows == ROWS_MAX)
			return why_set(err, errlen, "kernel-markers:%d: more than "
				       "%d rows", line, ROWS_MAX);
		struct row *r = &rows[(*nrows)++];
		r->kind = fact ? ROW_FACT : ROW_VERDICT;
		for (int i = 0; i < 4; i++)
			if ((size_t)snprintf(r->f[i], FIELD_MAX, "%s",
					     tok[i + 1]) >= FIELD_MAX)
				return why_set(err, errlen, "kernel-markers:%d: '%s' "
					       "is longer than %d bytes", line,
					       tok[i + 1], FIELD_MAX - 1);
	}
	return 0;
}

/* The value of item name in k; NULL when there is none. */
static char *find(struct kstate *k, const char *name)
{
	for (int i = 0; i < k->n; i++)
		if (strcmp(k->item[i].name, name) == 0)
			return k->item[i].value;
	return NULL;
}

/* The same, added ("unknown") when new; NULL when k is full. */
static char *item(struct kstate *k, const char *name)
{
	char *v = find(k, name);
	if (v)
		return v;
	if (k->n == KSTATE_MAX || strlen(name) >= KSTATE_NAME_MAX)
		return NULL;
	snprintf(k->item[k->n].name, KSTATE_NAME_MAX, "%s", name);
	snprintf(k->item[k->n].value, KSTATE_VALUE_MAX, KSTATE_UNKNOWN);
	return k->item[k->n++].value;
}

/* The name of type id, past const, volatile and restrict (a typedef is a
 * name: rwlock_t is what tells the lock). */
static const char *type_name(const struct btf *b, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(b, id);
	while (t && (btf_is_const(t) || btf_is_volatile(t) ||
		     btf_is_restrict(t)))
		t = btf__type_by_id(b, t->type);
	return t ? btf__name_by_offset(b, t->name_off) : NULL;
}

/* Whether the first struct named st has member (any member: "*"); with
 * type, that member's type name goes there. */
static bool has_member(const struct btf *b, const char *st, const char *member,
		       char *type, size_t len)
{
	__s32 id = btf__find_by_name_kind(b, st, BTF_KIND_STRUCT);
	if (id < 0)
		return false;
	if (strcmp(member, "*") == 0)
		return true;
	const struct btf_type *t = btf__type_by_id(b, (__u32)id);
	const struct btf_member *m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(b, m->name_off);
		if (!name || strcmp(name, member) != 0)
			continue;
		const char *tn = type_name(b, m->type);
		if (type && tn && *tn)
			snprintf(type, len, "%s", tn);
		return !type || (tn && *tn);
	}
	return false;
}

/* The facts' rows answered from b: the first row of each fact that
 * matches gives it its value. */
static void facts(struct kstate *k, const struct btf *b, const struct row *rows,
		  int n)
{
	bool done[KSTATE_MAX] = { false };
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		char *v = r->kind == ROW_FACT ? item(k, r->f[0]) : NULL;
		if (!v || !b)
			continue;
		int j = (int)((v - k->item[0].value) / sizeof(k->item[0]));
		if (done[j])
			continue;
		bool by_type = strcmp(r->f[3], "=type") == 0;
		char type[KSTATE_VALUE_MAX];
		if (!has_member(b, r->f[1], r->f[2], by_type ? type : NULL,
				sizeof(type)))
			continue;
		snprintf(v, KSTATE_VALUE_MAX, "%s", by_type ? type : r->f[3]);
		done[j] = true;
	}
}

/* The verdicts' rows, from the facts. */
static void verdicts(struct kstate *k, const struct row *rows, int n)
{
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		if (r->kind != ROW_VERDICT)
			continue;
		char *v = item(k, r->f[0]);
		if (v && strcmp(v, KSTATE_UNKNOWN) == 0 &&
		    strcmp(kstate_get(k, r->f[1]), r->f[2]) == 0)
			snprintf(v, KSTATE_VALUE_MAX, "%s", r->f[3]);
	}
}

/* libbpf's own warnings would go to stderr at each parse; what went wrong
 * is said once, in k->why. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

int kstate_read(struct kstate *k, const char *markers, const char *btf,
		const char *realtime, char *err, size_t errlen)
{
	static struct row rows[ROWS_MAX];	/* the main thread's, at start */
	int n;
	memset(k, 0, sizeof(*k));
	if (parse(markers, rows, &n, err, errlen) < 0)
		return -1;
	libbpf_print_fn_t was = libbpf_set_print(quiet);
	struct btf *b = btf__parse(btf, NULL);
	int e = errno;
	libbpf_set_print(was);
	if (!b)
		snprintf(k->why, sizeof(k->why), "cannot read the BTF of %s: %s",
			 btf, strerror(e));
	facts(k, b, rows, n);
	btf__free(b);
	char *rt = find(k, RT_FACT);
	FILE *f = rt && strcmp(rt, KSTATE_UNKNOWN) == 0 && realtime ?
		  fopen(realtime, "re") : NULL;
	if (f) {
		if (fgetc(f) == '1')
			snprintf(rt, KSTATE_VALUE_MAX, "yes");
		fclose(f);
	}
	verdicts(k, rows, n);
	return 0;
}

const char *kstate_get(const struct kstate *k, const char *name)
{
	const char *v = find((struct kstate *)k, name);
	return v ? v : KSTATE_UNKNOWN;
}
