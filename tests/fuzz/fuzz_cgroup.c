/*
 * libFuzzer target for the cgroup readers (lib/cgroup.c): the mount table
 * and a task's cgroup list (cg_task_path_in, cg_task_cgroup_in), the quota knobs of both
 * versions (cg_get_quota) and cpu.stat (cg_read_stat). The input is the
 * files' text, parts separated by NUL bytes: mountinfo, cgroup, cpu.max
 * (also v1's cpu.cfs_quota_us), cpu.cfs_period_us, cpu.stat and
 * cpuacct.usage; the target writes them into a directory of its own and
 * reads them back the way relay and loadgen do.
 *
 * Whatever the files hold, a reader never crashes and never returns a
 * value the files did not say: a directory is a mount point from the
 * mount table followed by the tail of a path from the cgroup list; a
 * task's cgroup is the whole path field of a line of that list; a
 * number is one written in the file whole (not cut short, not wrapped
 * from a sign, not saturated from an overflow), or a thousandth of one
 * where the file counts nanoseconds; "unlimited" is a quota the file
 * said was "max" (v2) or -1 (v1).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MOUNTINFO, CGROUP, QUOTA, PERIOD, STAT, USAGE, NPARTS };
static const char *const names[NPARTS] = {
	"mountinfo", "cgroup", "cpu.max", "cpu.cfs_period_us", "cpu.stat",
	"cpuacct.usage",
};

static char dir[4096];
static char path[NPARTS][4200];

static void cleanup(void)
{
	for (int i = 0; i < NPARTS; i++)
		unlink(path[i]);
	char quota[4200];
	snprintf(quota, sizeof(quota), "%s/cpu.cfs_quota_us", dir);
	unlink(quota);
	rmdir(dir);
}

static void make_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/fuzz_cgroup.XXXXXX", tmp ? tmp : P_tmpdir);
	if (!mkdtemp(dir))
		abort();
	for (int i = 0; i < NPARTS; i++)
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, names[i]);
	atexit(cleanup);
}

static void put(const char *file, const char *text, size_t len)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0)
		abort();
}

/* v is a whole number written in text: a maximal run of digits. */
static bool said(const char *text, uint64_t v)
{
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9' || (p > text && p[-1] >= '0' && p[-1] <= '9'))
			continue;
		char *end;
		errno = 0;
		unsigned long long x = strtoull(p, &end, 10);
		if (!errno && x == v)
			return true;
	}
	return false;
}

/* v is a number of text, or (ns) a thousandth of one. */
static bool said_ns(const char *text, uint64_t v)
{
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9' || (p > text && p[-1] >= '0' && p[-1] <= '9'))
			continue;
		errno = 0;
		unsigned long long x = strtoull(p, NULL, 10);
		if (!errno && (x == v || x / 1000 == v))
			return true;
	}
	return false;
}

/* The mountinfo path field s, its octal escapes undone, in out. */
static void unescape(char *out, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' &&
		    s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
		    s[i + 3] >= '0' && s[i + 3] <= '7') {
			out[o++] = (char)((s[i + 1] - '0') << 6 |
					  (s[i + 2] - '0') << 3 | (s[i + 3] - '0'));
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = 0;
}

/* dir is a mount point of some line of mountinfo (its fifth field),
 * then nothing or a path tail that some line of the cgroup list ends
 * with. */
static bool is_task_dir(const char *found, const char *mountinfo,
			const char *cgroup)
{
	char mnt[4200];
	for (const char *l = mountinfo; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		const char *f = l;
		size_t n = 0;
		for (int k = 0; k < 5; k++) {
			f += n;
			f += strspn(f, " ");
			n = strcspn(f, " \n");
			if (!n)
				break;
		}
		if (!n || n >= sizeof(mnt))
			continue;
		unescape(mnt, f, n);
		size_t ml = strlen(mnt);
		if (strncmp(found, mnt, ml) != 0)
			continue;
		const char *tail = found + ml;
		if (!*tail)
			return true;
		if (*tail != '/')
			continue;
		size_t tl = strlen(tail);
		for (const char *c = cgroup; *c; c += strcspn(c, "\n"), c += *c == '\n') {
			size_t cl = strcspn(c, "\n");
			if (cl >= tl && memcmp(c + cl - tl, tail, tl) == 0)
				return true;
		}
	}
	return false;
}

/* found is the whole path field ("id:controllers:PATH") of a line of
 * cgroup, and absolute. */
static bool is_path_field(const char *found, const char *cgroup)
{
	size_t fl = strlen(found);
	if (found[0] != '/')
		return false;
	for (const char *c = cgroup; *c; c += strcspn(c, "\n"), c += *c == '\n') {
		size_t cl = strcspn(c, "\n");
		if (cl > fl && c[cl - fl - 1] == ':' &&
		    memcmp(c + cl - fl, found, fl) == 0)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		make_dir();
	/* the parts, each NUL-terminated for the oracle */
	char *text = malloc(size + NPARTS);
	const char *part[NPARTS];
	if (!text)
		return 0;
	memcpy(text, data, size);
	memset(text + size, 0, NPARTS);
	const char *p = text, *end = text + size;
	for (int i = 0; i < NPARTS; i++) {
		size_t n = p < end ? strnlen(p, (size_t)(end - p)) : 0;
		part[i] = p < end ? p : "";
		put(path[i], part[i], n);
		p += n + 1;
	}
	char quota_v1[4200];
	snprintf(quota_v1, sizeof(quota_v1), "%s/cpu.cfs_quota_us", dir);
	put(quota_v1, part[QUOTA], strlen(part[QUOTA]));

	char found[256];
	memset(found, 0x5a, sizeof(found));
	if (cg_task_path_in(path[MOUNTINFO], path[CGROUP], found,
			    sizeof(found)) == 0 &&
	    (strnlen(found, sizeof(found)) == sizeof(found) ||
	     !is_task_dir(found, part[MOUNTINFO], part[CGROUP])))
		abort();

	if (cg_task_cgroup_in(path[CGROUP], found, sizeof(found)) == 0 &&
	    (strnlen(found, sizeof(found)) == sizeof(found) ||
	     !is_path_field(found, part[CGROUP])))
		abort();

	struct cg cg = { 0 };
	snprintf(cg.path, sizeof(cg.path), "%s", dir);
	for (cg.version = 1; cg.version <= 2; cg.version++) {
		int64_t q, per;
		if (cg_get_quota(&cg, &q, &per) == 0) {
			const char *knob = part[QUOTA];
			const char *ptext = cg.version == 2 ? knob : part[PERIOD];
			if (per < 0 || !said(ptext, (uint64_t)per))
				abort();
			if (q == -1 ? !strstr(knob, cg.version == 2 ? "max" : "-1")
				    : q < 0 || !said(knob, (uint64_t)q))
				abort();
		}
		struct cg_stat st;
		const char *stat = part[STAT];
		if (cg_read_stat(&cg, &st) == 0 &&
		    ((st.nr_periods && !said(stat, st.nr_periods)) ||
		     (st.nr_throttled && !said(stat, st.nr_throttled)) ||
		     (st.throttled_us && !said_ns(stat, st.throttled_us)) ||
		     (st.usage_us && !said(stat, st.usage_us) &&
		      !(cg.version == 1 && said_ns(part[USAGE], st.usage_us)))))
			abort();
	}
	free(text);
	return 0;
}
