/*
 * cgroup: CPU bandwidth quotas on cgroup v2 or v1, with errors that say
 * which file refused and what to do about it.
 *
 * The hierarchy used is the one that carries the cpu controller: a v1 mount
 * with the "cpu" option when there is one (then the controller cannot be on
 * v2 at the same time), else the cgroup2 mount.
 */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define CGROUP_SUPER_MAGIC	0x27e0eb
#define CGROUP2_SUPER_MAGIC	0x63677270

static void say(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* What to do when writing or creating path failed with errno e. */
static const char *hint(int e)
{
	switch (e) {
	case EACCES:
	case EPERM:
	case EROFS:
		return "run as root, or use a cgroup delegated to this user "
		       "(systemd-run --user -p Delegate=yes)";
	case ENOENT:
		return "the cpu controller is not enabled there: enable it in "
		       "the parent's cgroup.subtree_control (echo +cpu > ...)";
	case EBUSY:
		return "cgroup v2 allows no processes in a cgroup whose "
		       "children get controllers: use a leaf cgroup";
	case EOPNOTSUPP:
		return "this cgroup cannot be made threaded: a domain "
		       "controller is enabled below its parent";
	default:
		return "check the cgroup exists and is writable";
	}
}

static int write_str(const char *dir, const char *file, const char *val,
		     char *err, size_t errlen)
{
	char path[4352];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		say(err, errlen, "cannot open %s: %s; %s", path, strerror(e),
		    hint(e));
		errno = e;
		return -1;
	}
	ssize_t n = write(fd, val, strlen(val));
	int e = errno;
	close(fd);
	if (n < 0) {
		say(err, errlen, "cannot write \"%s\" to %s: %s; %s", val, path,
		    strerror(e), hint(e));
		errno = e;
		return -1;
	}
	return 0;
}

/* Read a small file into buf (NUL-terminated). Returns bytes or -1. */
static ssize_t read_str(const char *dir, const char *file, char *buf,
			size_t len)
{
	char path[4352];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t got = 0;
	ssize_t n;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = 0;
	return (ssize_t)got;
}

/* Is word one of the separator-delimited tokens of list? */
static bool has_token(const char *list, const char *word, const char *seps)
{
	size_t wl = strlen(word);
	const char *p = list;
	while (*p) {
		size_t tl = strcspn(p, seps);
		if (tl == wl && strncmp(p, word, wl) == 0)
			return true;
		p += tl;
		p += strspn(p, seps);
	}
	return false;
}

struct hier {
	int version;
	char mnt[4096];		/* where it is mounted */
	char root[4096];	/* the cgroup path that mount point shows */
};

/* Split s in place at runs of sep into at most max fields. Returns the
 * count. */
static int split(char *s, char sep, char **v, int max)
{
	int n = 0;
	for (;;) {
		while (*s == sep)
			s++;
		if (!*s || n == max)
			return n;
		v[n++] = s;
		while (*s && *s != sep)
			s++;
		if (*s)
			*s++ = 0;
	}
}

/* Copy a mountinfo path, undoing its octal escapes (\040 is a space).
 * Returns 0, or -1 when it does not fit. */
static int unescape(char *out, size_t len, const char *s)
{
	size_t n = 0;
	for (; *s; s++) {
		if (n + 1 >= len)
			return -1;
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			out[n++] = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
					  (s[3] - '0'));
			s += 3;
		} else {
			out[n++] = *s;
		}
	}
	out[n] = 0;
	return 0;
}

/* A mountinfo line: "id parent maj:min root mount-point options
 * [optional...] - fstype source super-options". Returns the version of
 * the cgroup hierarchy it mounts (1 only with the cpu controller), 0 for
 * anything else, filling h. */
static int hier_line(char *line, struct hier *h)
{
	char *dash = strstr(line, " - "), *l[6], *r[3];
	if (!dash)
		return 0;
	*dash = 0;
	if (split(line, ' ', l, 6) < 6 || split(dash + 3, ' ', r, 3) < 3)
		return 0;
	int v = strcmp(r[0], "cgroup2") == 0 ? 2 :
		strcmp(r[0], "cgroup") == 0 && has_token(r[2], "cpu", ",") ? 1 : 0;
	if (!v || unescape(h->root, sizeof(h->root), l[3]) < 0 ||
	    unescape(h->mnt, sizeof(h->mnt), l[4]) < 0)
		return 0;
	h->version = v;
	return v;
}

/* Find the hierarchy that carries the cpu controller in the mount table
 * file (the format of /proc/self/mountinfo): a v1 one with the cpu
 * controller, else the first cgroup2 mount. */
static int find_hier(const char *file, struct hier *h)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	struct hier cur, v2 = { 0 };
	int found = 0;
	while (!found && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		int v = hier_line(line, &cur);
		if (v == 1) {
			*h = cur;
			found = 1;
		} else if (v == 2 && !v2.version) {
			v2 = cur;
		}
	}
	free(line);
	fclose(f);
	if (!found && v2.version) {
		*h = v2;
		found = 1;
	}
	return found ? 0 : -1;
}

/* A line of a task's cgroup file, "hierarchy-id:controllers:path", split
 * in place. Returns 2 for cgroup v2's line ("0::path"), 1 for a v1 line
 * whose controllers include cpu, 0 for any other line. */
static int split_task_line(char *line, const char **path)
{
	char *c1 = strchr(line, ':');
	char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c2)
		return 0;
	*c1 = *c2 = 0;
	*path = c2 + 1;
	if (strcmp(line, "0") == 0 && !c1[1])
		return 2;
	return has_token(c1 + 1, "cpu", ",") ? 1 : 0;
}

/* The directory that a line of a task's cgroup file names in h, if the
 * line is h's and its path is below the mount's root. Returns 1 and fills
 * out, 0 not h's line, -1 no directory of h's mount (or it does not fit
 * out). */
static int task_line(const struct hier *h, char *line, char *out, size_t len)
{
	const char *p;
	if (split_task_line(line, &p) != h->version)
		return 0;
	size_t rl = strlen(h->root);
	if (*p != '/')
		return -1;	/* the kernel writes absolute paths */
	/* A mount of a subtree shows only the cgroups below its root (a
	 * sibling that shares a prefix of the name is not one of them). */
	if (strcmp(h->root, "/") != 0) {
		if (strncmp(p, h->root, rl) != 0 || (p[rl] && p[rl] != '/'))
			return -1;
		p += rl;
	}
	if (strcmp(p, "/") == 0)
		p = "";
	return (size_t)snprintf(out, len, "%s%s", h->mnt, p) < len ? 1 : -1;
}

/* Call fn(line, arg) on each line of file, its newline cut off, until fn
 * returns non-zero. Returns what fn returned last (0 at the end of the
 * file), or -1 when the file cannot be read. */
static int each_line(const char *file, int (*fn)(char *line, void *arg),
		     void *arg)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	while (!rc && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		rc = fn(line, arg);
	}
	free(line);
	fclose(f);
	return rc;
}

struct dir_want {
	const struct hier *h;
	char *out;
	size_t len;
};

static int dir_line(char *line, void *arg)
{
	struct dir_want *w = arg;
	return task_line(w->h, line, w->out, w->len);
}

/* The directory in hierarchy h of the task whose cgroup file (the format
 * of /proc/<tid>/cgroup) is file. */
static int task_dir(const struct hier *h, const char *file, char *out,
		    size_t len)
{
	struct dir_want w = { h, out, len };
	return each_line(file, dir_line, &w) > 0 ? 0 : -1;
}

int cg_task_path_in(const char *mountinfo, const char *cgroup, char *path,
		    size_t len)
{
	struct hier h;
	if (find_hier(mountinfo, &h) < 0)
		return -1;
	return task_dir(&h, cgroup, path, len);
}

struct cgroup_want {
	char *out;
	size_t len;
	int taken;		/* the kind of line out holds, 0: none */
};

static int cgroup_line(char *line, void *arg)
{
	struct cgroup_want *w = arg;
	const char *p;
	int kind = split_task_line(line, &p);
	/* a v1 cpu hierarchy, where one is mounted, is the one the
	 * scheduler's group settings live in: it wins over v2 */
	if (!kind || *p != '/' || (w->taken && kind != 1))
		return 0;
	if ((size_t)snprintf(w->out, w->len, "%s", p) >= w->len) {
		w->taken = 0;
		return -1;
	}
	w->taken = kind;
	return kind == 1;
}

int cg_task_cgroup_in(const char *cgroup, char *path, size_t len)
{
	struct cgroup_want w = { path, len, 0 };
	each_line(cgroup, cgroup_line, &w);
	return w.taken ? 0 : -1;
}

int cg_task_path(pid_t tid, char *path, size_t len)
{
	char file[64];
	if (tid)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)tid);
	else
		snprintf(file, sizeof(file), "/proc/thread-self/cgroup");
	return cg_task_path_in("/proc/self/mountinfo", file, path, len);
}

static bool is_cgroup_dir(const char *path, int *version)
{
	struct statfs sf;
	struct stat st;
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode) || statfs(path, &sf) < 0)
		return false;
	if (sf.f_type == CGROUP2_SUPER_MAGIC)
		*version = 2;
	else if (sf.f_type == CGROUP_SUPER_MAGIC)
		*version = 1;
	else
		return false;
	return true;
}

/* The systemd slice "a-b.slice" lives at <mnt>/a.slice/a-b.slice. */
static int slice_dir(const struct hier *h, const char *slice, char *out,
		     size_t len)
{
	size_t n = strlen(slice) - strlen(".slice");
	int used = snprintf(out, len, "%s", h->mnt);
	for (size_t i = 0; i <= n && used < (int)len; i++) {
		if (i == n || slice[i] == '-') {
			if (i == 0)
				return -1;
			used += snprintf(out + used, len - (size_t)used,
					 "/%.*s.slice", (int)i, slice);
		}
	}
	return used < (int)len ? 0 : -1;
}

/* cgroup v2: make the cpu controller reach the children of dir, enabling it
 * in every cgroup.subtree_control from the mount point down. */
static int enable_cpu_down_to(const struct hier *h, const char *dir, char *err,
			      size_t errlen)
{
	char cur[4096], buf[1024];
	size_t ml = strlen(h->mnt);
	snprintf(cur, sizeof(cur), "%s", h->mnt);
	const char *rest = dir + ml;
	for (;;) {
		if (read_str(cur, "cgroup.controllers", buf, sizeof(buf)) < 0 ||
		    !has_token(buf, "cpu", " \n")) {
			say(err, errlen,
			    "the cpu controller is not available in %s "
			    "(cgroup.controllers: \"%.*s\"); it may be bound to "
			    "a cgroup v1 hierarchy, or the parent does not "
			    "delegate it (echo +cpu > <parent>/cgroup.subtree_control)",
			    cur, (int)strcspn(buf, "\n"), buf);
			return -1;
		}
		if (read_str(cur, "cgroup.subtree_control", buf, sizeof(buf)) < 0
		    || !has_token(buf, "cpu", " \n")) {
			if (write_str(cur, "cgroup.subtree_control", "+cpu", err,
				      errlen) < 0)
				return -1;
		}
		rest += strspn(rest, "/");
		if (!*rest)
			return 0;
		size_t cl = strcspn(rest, "/");
		size_t used = strlen(cur);
		snprintf(cur + used, sizeof(cur) - used, "/%.*s", (int)cl, rest);
		rest += cl;
	}
}

static int make_dir(const char *path, char *err, size_t errlen)
{
	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && rmdir(path) == 0 && mkdir(path, 0755) == 0)
		return 0;
	int e = errno;
	say(err, errlen, "cannot create cgroup %s: %s; %s", path, strerror(e),
	    hint(e));
	return -1;
}

static int remember(struct cg *cg, pid_t id, bool process)
{
	if (cg->nmoved == CG_MAX_MOVED)
		return -1;
	cg->moved[cg->nmoved].id = id;
	cg->moved[cg->nmoved].process = process;
	cg->nmoved++;
	return 0;
}

/* Use an existing cgroup directory as it is. */
static int open_existing(struct cg *cg, const struct hier *h, const char *where,
			 bool threaded, char *err, size_t errlen)
{
	int version = 0;
	if (is_cgroup_dir(where, &version))
		snprintf(cg->path, sizeof(cg->path), "%s", where);
	else {
		snprintf(cg->path, sizeof(cg->path), "%s%s", h->mnt, where);
		if (!is_cgroup_dir(cg->path, &version)) {
			say(err, errlen,
			    "%s is not a cgroup directory (neither as given nor "
			    "under %s); create it first (mkdir) or give no path "
			    "to have one created", where, h->mnt);
			return -1;
		}
	}
	if (version != h->version) {
		say(err, errlen,
		    "%s is on a cgroup v%d hierarchy, but the cpu controller "
		    "is on the v%d hierarchy at %s; use a cgroup under %s",
		    cg->path, version, h->version, h->mnt, h->mnt);
		return -1;
	}
	cg->version = version;
	const char *knob = version == 2 ? "cpu.max" : "cpu.cfs_quota_us";
	char buf[64];
	if (read_str(cg->path, knob, buf, sizeof(buf)) < 0) {
		say(err, errlen,
		    "%s has no %s: the cpu controller is not enabled there; "
		    "enable it in the parent (echo +cpu > <parent>/cgroup.subtree_control)",
		    cg->path, knob);
		return -1;
	}
	if (version == 1) {
		cg->threaded = true;
		return 0;
	}
	cg->threaded = read_str(cg->path, "cgroup.type", buf, sizeof(buf)) > 0
		       && strncmp(buf, "threaded", 8) == 0;
	if (threaded && !cg->threaded) {
		say(err, errlen,
		    "%s is a domain cgroup (cgroup.type), so single threads "
		    "cannot be moved into it; make it threaded (echo threaded > "
		    "%s/cgroup.type) or put the whole process there",
		    cg->path, cg->path);
		return -1;
	}
	return 0;
}

int cg_open(struct cg *cg, const char *where, const char *name, bool threaded,
	    char *err, size_t errlen)
{
	struct hier h;
	memset(cg, 0, sizeof(*cg));
	if (find_hier("/proc/self/mountinfo", &h) < 0) {
		say(err, errlen,
		    "no cgroup hierarchy with the cpu controller is mounted "
		    "(/proc/self/mountinfo); mount one: mount -t cgroup2 none "
		    "/sys/fs/cgroup");
		return -1;
	}
	if (task_dir(&h, "/proc/thread-self/cgroup", cg->home,
		     sizeof(cg->home)) < 0) {
		say(err, errlen, "cannot find this process's cgroup in "
		    "/proc/thread-self/cgroup for the hierarchy at %s", h.mnt);
		return -1;
	}
	cg->version = h.version;
	size_t wl = where ? strlen(where) : 0;
	bool slice = wl > 6 && strcmp(where + wl - 6, ".slice") == 0 &&
		     !strchr(where, '/');
	if (where && !slice) {
		if (open_existing(cg, &h, where, threaded, err, errlen) < 0) {
			cg->path[0] = 0;
			return -1;
		}
		return 0;
	}

	char parent[4096];
	int pv;
	if (slice) {
		if (slice_dir(&h, where, parent, sizeof(parent)) < 0 ||
		    !is_cgroup_dir(parent, &pv)) {
			say(err, errlen,
			    "systemd slice %s is not active (no cgroup %s); "
			    "start it (systemctl start %s) or name a cgroup "
			    "directory instead", where, parent, where);
			return -1;
		}
	} else if (strcmp(cg->home, h.mnt) == 0) {
		snprintf(parent, sizeof(parent), "%s", cg->home);
	} else {
		snprintf(parent, sizeof(parent), "%s", cg->home);
		*strrchr(parent, '/') = 0;
	}
	if (h.version == 2 && enable_cpu_down_to(&h, parent, err, errlen) < 0)
		return -1;

	char dir[4000];
	if (snprintf(dir, sizeof(dir), "%s/relay-%s-%d", parent, name,
		     (int)getpid()) >= (int)sizeof(dir)) {
		say(err, errlen, "cgroup path under %s is too long", parent);
		return -1;
	}
	if (make_dir(dir, err, errlen) < 0)
		return -1;
	cg->created = true;
	if (h.version == 1 || !threaded) {
		snprintf(cg->path, sizeof(cg->path), "%s", dir);
		cg->threaded = h.version == 1;
		return 0;
	}

	/* v2 threads: the process moves to a domain cgroup of its own, and
	 * the quota goes on a threaded child that single threads join. */
	snprintf(cg->domain, sizeof(cg->domain), "%s", dir);
	snprintf(cg->path, sizeof(cg->path), "%s/quota", dir);
	cg->threaded = true;
	if (make_dir(cg->path, err, errlen) < 0 ||
	    write_str(cg->path, "cgroup.type", "threaded", err, errlen) < 0 ||
	    write_str(dir, "cgroup.subtree_control", "+cpu", err, errlen) < 0 ||
	    write_str(dir, "cgroup.procs", "0", err, errlen) < 0 ||
	    remember(cg, getpid(), true) < 0) {
		int e = errno;
		cg_close(cg);
		errno = e;
		return -1;
	}
	return 0;
}

/* The decimal number at *p after blanks, ending at a blank, a newline or
 * the end; *p moves past it. false for anything else, a sign or an
 * overflow included: a file the kernel wrote has none of them. */
static bool number(const char **p, uint64_t *v)
{
	const char *s = *p + strspn(*p, " \t");
	char *end;
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || (*end && !strchr(" \t\n", *end)))
		return false;
	*v = x;
	*p = end;
	return true;
}

/* Nothing but blanks and newlines left at p. */
static bool at_end(const char *p)
{
	return !p[strspn(p, " \t\n")];
}

/* Nothing but blanks left on p's line. */
static bool at_end_of_line(const char *p)
{
	p += strspn(p, " \t");
	return !*p || *p == '\n';
}

/* The key of kl bytes at line is word. */
static bool key_is(const char *line, size_t kl, const char *word)
{
	return kl == strlen(word) && memcmp(line, word, kl) == 0;
}

/* A one-line knob of dir that must fit buf whole. */
static bool read_knob(const char *dir, const char *file, char *buf, size_t len)
{
	ssize_t n = read_str(dir, file, buf, len);
	return n > 0 && (size_t)n < len - 1;
}

int cg_get_quota(const struct cg *cg, int64_t *quota_us, int64_t *period_us)
{
	char buf[128];
	const char *p = buf;
	uint64_t q = 0, per;
	bool unlimited;
	if (cg->version == 2) {
		/* "max 100000" or "50000 100000" */
		if (!read_knob(cg->path, "cpu.max", buf, sizeof(buf)))
			return -1;
		p += strspn(p, " \t");
		unlimited = strncmp(p, "max", 3) == 0;
		if (unlimited)
			p += 3;
		if ((!unlimited && !number(&p, &q)) || (unlimited && *p != ' ') ||
		    !number(&p, &per) || !at_end(p))
			return -1;
	} else {
		/* cpu.cfs_quota_us is -1 when unlimited */
		if (!read_knob(cg->path, "cpu.cfs_quota_us", buf, sizeof(buf)))
			return -1;
		p += strspn(p, " \t");
		unlimited = strncmp(p, "-1", 2) == 0 && at_end(p + 2);
		if (!unlimited && (!number(&p, &q) || !at_end(p)))
			return -1;
		p = buf;
		if (!read_knob(cg->path, "cpu.cfs_period_us", buf, sizeof(buf)) ||
		    !number(&p, &per) || !at_end(p))
			return -1;
	}
	if (q > INT64_MAX || per > INT64_MAX)
		return -1;
	*quota_us = unlimited ? -1 : (int64_t)q;
	*period_us = (int64_t)per;
	return 0;
}

static int write_quota(struct cg *cg, int64_t quota_us, int64_t period_us,
		       char *err, size_t errlen)
{
	char buf[64];
	if (cg->version == 2) {
		if (quota_us < 0)
			snprintf(buf, sizeof(buf), "max %lld", (long long)period_us);
		else
			snprintf(buf, sizeof(buf), "%lld %lld",
				 (long long)quota_us, (long long)period_us);
		return write_str(cg->path, "cpu.max", buf, err, errlen);
	}
	/* v1 checks the quota against the period on every write: lift the
	 * quota, change the period, then set the new quota. */
	if (write_str(cg->path, "cpu.cfs_quota_us", "-1", err, errlen) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%lld", (long long)period_us);
	if (write_str(cg->path, "cpu.cfs_period_us", buf, err, errlen) < 0)
		return -1;
	if (quota_us < 0)
		return 0;
	snprintf(buf, sizeof(buf), "%lld", (long long)quota_us);
	return write_str(cg->path, "cpu.cfs_quota_us", buf, err, errlen);
}

int cg_set_quota(struct cg *cg, int64_t quota_us, int64_t period_us,
		 char *err, size_t errlen)
{
	if (period_us < 1000 || period_us > 1000000) {
		say(err, errlen, "quota period %lld us is outside the kernel's "
		    "range 1000..1000000 us", (long long)period_us);
		errno = EINVAL;
		return -1;
	}
	if (quota_us >= 0 && quota_us < 1000) {
		say(err, errlen, "quota %lld us is below the kernel's minimum of "
		    "1000 us per period; use a longer period",
		    (long long)quota_us);
		errno = EINVAL;
		return -1;
	}
	if (!cg->created && !cg->quota_saved) {
		if (cg_get_quota(cg, &cg->saved_quota_us,
				 &cg->saved_period_us) < 0) {
			say(err, errlen, "cannot read the quota of %s", cg->path);
			return -1;
		}
		cg->quota_saved = true;
	}
	if (write_quota(cg, quota_us, period_us, err, errlen) < 0) {
		if (errno == EINVAL)
			say(err, errlen,
			    "%s refused quota %lld us per %lld us: a parent "
			    "cgroup has a lower quota, or the values are out "
			    "of range", cg->path, (long long)quota_us,
			    (long long)period_us);
		return -1;
	}
	return 0;
}

static int move(struct cg *cg, const char *file, pid_t id, bool process,
		char *err, size_t errlen)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%d", (int)id);
	if (write_str(cg->path, file, buf, err, errlen) < 0)
		return -1;
	if (remember(cg, id, process) < 0) {
		say(err, errlen, "more than %d tasks moved into %s",
		    CG_MAX_MOVED, cg->path);
		return -1;
	}
	return 0;
}

int cg_add_thread(struct cg *cg, pid_t tid, char *err, size_t errlen)
{
	if (!tid)
		tid = gettid();
	if (!cg->threaded) {
		say(err, errlen, "%s is not a threaded cgroup: single threads "
		    "cannot be moved into it", cg->path);
		errno = EINVAL;
		return -1;
	}
	return move(cg, cg->version == 2 ? "cgroup.threads" : "tasks", tid,
		    false, err, errlen);
}

int cg_add_process(struct cg *cg, pid_t pid, char *err, size_t errlen)
{
	if (!pid)
		pid = getpid();
	if (cg->version == 1 || !cg->threaded)
		return move(cg, "cgroup.procs", pid, true, err, errlen);

	/* a v2 threaded cgroup takes threads one by one */
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d) {
		say(err, errlen, "cannot list %s: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d)))
		if (e->d_name[0] != '.')
			rc = cg_add_thread(cg, (pid_t)atoi(e->d_name), err,
					   errlen);
	closedir(d);
	return rc;
}

int cg_read_stat(const struct cg *cg, struct cg_stat *st)
{
	return cg_read_stat_dir(cg->path, cg->version, st);
}

int cg_read_stat_dir(const char *dir, int version, struct cg_stat *st)
{
	char buf[4096];
	uint64_t v;
	memset(st, 0, sizeof(*st));
	ssize_t n = read_str(dir, "cpu.stat", buf, sizeof(buf));
	if (n < 0)
		return -1;
	/* A file longer than buf: its last line read is cut short. */
	if ((size_t)n == sizeof(buf) - 1)
		*(strrchr(buf, '\n') ? strrchr(buf, '\n') : buf) = 0;
	for (char *line = buf; *line; line += strcspn(line, "\n"),
	     line += *line == '\n') {
		const char *p = line + strcspn(line, " \n");
		size_t kl = (size_t)(p - line);
		if (!number(&p, &v) || !at_end_of_line(p))
			continue;
		if (key_is(line, kl, "nr_periods"))
			st->nr_periods = v;
		else if (key_is(line, kl, "nr_throttled"))
			st->nr_throttled = v;
		else if (key_is(line, kl, "throttled_usec"))
			st->throttled_us = v;
		else if (key_is(line, kl, "throttled_time"))	/* v1: ns */
			st->throttled_us = v / 1000;
		else if (key_is(line, kl, "usage_usec"))
			st->usage_us = v;
	}
	const char *p = buf;
	if (version == 1 &&
	    read_knob(dir, "cpuacct.usage", buf, sizeof(buf)) &&
	    number(&p, &v) && at_end(p))
		st->usage_us = v / 1000;
	return 0;
}

static int v2_line(char *line, void *h)
{
	return hier_line(line, h) == 2;
}

/* The first cgroup2 mount in the mount table file. */
static int v2_mount(const char *file, struct hier *h)
{
	return each_line(file, v2_line, h) > 0 ? 0 : -1;
}

int cg_watch_dir(const char *name, char *dir, size_t len, char *err,
		 size_t errlen)
{
	struct hier h;
	int version = 0;
	if (v2_mount("/proc/self/mountinfo", &h) < 0) {
		say(err, errlen, "'%s': no cgroup v2 hierarchy is mounted "
		    "(/proc/self/mountinfo)", name);
		return -1;
	}
	size_t nl = strlen(name);
	bool slice = nl > 6 && strcmp(name + nl - 6, ".slice") == 0 &&
		     !strchr(name, '/');
	int rc = -1;
	if (slice) {
		rc = slice_dir(&h, name, dir, len);
	} else if (*name == '/') {
		/* As given when it is there (as cg_open takes one), else under
		 * the mount. */
		struct stat st;
		bool as_given = stat(name, &st) == 0;
		rc = (size_t)snprintf(dir, len, "%s%s", as_given ? "" : h.mnt,
				      name) < len ? 0 : -1;
	}
	if (rc < 0) {
		say(err, errlen, "'%s' is not a slice (NAME.slice) nor a path "
		    "(absolute, or under %s)", name, h.mnt);
		return -1;
	}
	struct stat st;
	if (stat(dir, &st) < 0) {
		say(err, errlen, "'%s': no cgroup %s: %s (%s)", name, dir,
		    strerror(errno), slice ? "start the slice, or watch a group "
		    "that is there" : "watch a group that is there");
		return -1;
	}
	if (!is_cgroup_dir(dir, &version) || version != 2) {
		say(err, errlen, "'%s': %s is not a cgroup v2 directory%s", name,
		    dir, version == 1 ? " (it is cgroup v1's)" : "");
		return -1;
	}
	char buf[4096];
	if (read_str(dir, "cpu.stat", buf, sizeof(buf)) < 0 ||
	    !strstr(buf, "nr_periods ")) {
		say(err, errlen, "'%s': %s/cpu.stat has no nr_periods: the cpu "
		    "controller is not enabled for it, so it has no quota to be "
		    "throttled by (CPUQuota= on a slice enables it)", name, dir);
		return -1;
	}
	return 0;
}

struct cg_stat cg_stat_delta(const struct cg_stat *before,
			     const struct cg_stat *after)
{
	return (struct cg_stat){
		.nr_periods = after->nr_periods - before->nr_periods,
		.nr_throttled = after->nr_throttled - before->nr_throttled,
		.throttled_us = after->throttled_us - before->throttled_us,
		.usage_us = after->usage_us - before->usage_us,
	};
}

int64_t cg_quota_us(double pct, int64_t period_us)
{
	/* !(pct >= 0): a NaN is no quota either. pct x period_us is exact
	 * for whole percentages; one division rounds. */
	if (!(pct >= 0))
		return -1;
	return llround(pct * (double)period_us / 100.0);
}

/* Move every task still in dir (its list file) back home. */
static void evacuate(const struct cg *cg, const char *dir, const char *list,
		     const char *to)
{
	char buf[8192];
	if (read_str(dir, list, buf, sizeof(buf)) <= 0)
		return;
	for (char *p = strtok(buf, "\n"); p; p = strtok(NULL, "\n"))
		write_str(cg->home, to, p, NULL, 0);
}

/* rmdir, waiting a little for exiting threads to leave. */
static void remove_dir(const char *dir)
{
	struct timespec ms = { 0, 2 * 1000 * 1000 };
	for (int i = 0; i < 250 && rmdir(dir) < 0 && errno == EBUSY; i++)
		nanosleep(&ms, NULL);
}

void cg_close(struct cg *cg)
{
	if (!cg->path[0])
		return;
	for (int i = cg->nmoved - 1; i >= 0; i--) {
		char buf[32];
		snprintf(buf, sizeof(buf), "%d", (int)cg->moved[i].id);
		const char *to = cg->moved[i].process ? "cgroup.procs"
				 : cg->version == 1 ? "tasks" : "cgroup.threads";
		write_str(cg->home, to, buf, NULL, 0);
	}
	cg->nmoved = 0;
	if (cg->quota_saved) {
		write_quota(cg, cg->saved_quota_us, cg->saved_period_us, NULL, 0);
		cg->quota_saved = false;
	}
	if (cg->created) {
		if (cg->version == 1)
			evacuate(cg, cg->path, "tasks", "tasks");
		else
			evacuate(cg, cg->domain[0] ? cg->domain : cg->path,
				 "cgroup.procs", "cgroup.procs");
		remove_dir(cg->path);
		if (cg->domain[0])
			remove_dir(cg->domain);
		cg->created = false;
	}
	cg->path[0] = 0;
	cg->domain[0] = 0;
}
