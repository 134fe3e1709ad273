/*
 * cgroup: put threads or processes under a CPU bandwidth quota and read back
 * the throttling they got. cgroup v2 (cpu.max, cpu.stat) first; cgroup v1
 * (cpu.cfs_quota_us, cpu.cfs_period_us, cpu.stat) where that is what the
 * host has: the hierarchy that carries the cpu controller is the one used.
 *
 * Every failing call fills err with a sentence naming the file and what to
 * do (no permission, no cpu controller, not a cgroup, ...).
 */
#ifndef RELAY_CGROUP_H
#define RELAY_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CG_MAX_MOVED 256

struct cg {
	char path[4096];	/* the cgroup directory the quota applies to */
	int version;		/* 1 or 2 */
	bool created;		/* made by cg_open, removed by cg_close */
	bool threaded;		/* single threads may be moved (v1, or v2 threaded) */
	char home[4096];	/* where moved tasks go back to on cg_close */
	char domain[4096];	/* v2 threaded and created: the domain cgroup made
				 * to hold the whole process, path is its threaded
				 * child; "" otherwise */
	bool quota_saved;	/* cg_set_quota changed a cgroup it did not create */
	int64_t saved_quota_us;	/* ... and this is what cg_close puts back */
	int64_t saved_period_us;
	int nmoved;		/* tasks moved in, moved home again by cg_close */
	struct { pid_t id; bool process; } moved[CG_MAX_MOVED];
};

struct cg_stat {
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_us;
	uint64_t usage_us;	/* 0 where the hierarchy does not say (v1 without cpuacct) */
};

/* Open a cgroup for a quota. where is NULL (create a new child named
 * "relay-<name>-<pid>" next to the caller's own cgroup), an existing cgroup
 * directory (absolute, or relative to the cpu hierarchy's mount point, e.g.
 * "/demo"), or a systemd slice name ("loadgen.slice": the child is created
 * inside that slice). threaded asks for single threads to be movable (v2:
 * a threaded subtree; the process goes to the domain cgroup around it).
 * Returns 0, or -1 with err filled. */
int cg_open(struct cg *cg, const char *where, const char *name, bool threaded,
	    char *err, size_t errlen);

/* Set the quota: quota_us of CPU time every period_us (quota_us < 0: no
 * limit). Returns 0, or -1 with err filled. */
int cg_set_quota(struct cg *cg, int64_t quota_us, int64_t period_us,
		 char *err, size_t errlen);

/* Read the quota back (quota_us -1 when unlimited). Returns 0 or -1. */
int cg_get_quota(const struct cg *cg, int64_t *quota_us, int64_t *period_us);

/* Move a process (all its threads) or, when cg->threaded, one thread.
 * pid/tid 0 means the caller / the calling thread. Returns 0, or -1 with err
 * filled. */
int cg_add_process(struct cg *cg, pid_t pid, char *err, size_t errlen);
int cg_add_thread(struct cg *cg, pid_t tid, char *err, size_t errlen);

/* Read cpu.stat. Returns 0, or -1 when it cannot be read. */
int cg_read_stat(const struct cg *cg, struct cg_stat *st);

/* The same of the cgroup directory dir on a hierarchy of that version. */
int cg_read_stat_dir(const char *dir, int version, struct cg_stat *st);

/* The cgroup v2 directory of a group to watch, name a systemd slice
 * ("loadgen.slice": <mount>/loadgen.slice) or a path, as given when it is
 * there, else under the cgroup2 mount ("/a/b"), into dir: it must be there, be a cgroup
 * v2 directory, and have CPU bandwidth accounting (nr_periods in its
 * cpu.stat). Returns 0, or -1 with err naming what is wrong. */
int cg_watch_dir(const char *name, char *dir, size_t len, char *err,
		 size_t errlen);

/* What the counters grew by from the reading before to the one after. */
struct cg_stat cg_stat_delta(const struct cg_stat *before,
			     const struct cg_stat *after);

/* The quota_us of cg_set_quota for pct percent of one CPU every period_us
 * (200: two CPUs): pct x period_us / 100 to the nearest microsecond, a
 * half away from zero (33 % of 1050 us is 347 us); -1 (no limit) for a
 * pct below 0. Every program here converts its percentage with it. */
int64_t cg_quota_us(double pct, int64_t period_us);

/* The cgroup directory (on the cpu hierarchy) that task tid is in now, read
 * from /proc/<tid>/cgroup; tid 0 is the calling thread. Returns 0 or -1. */
int cg_task_path(pid_t tid, char *path, size_t len);

/* The same from the files mountinfo and cgroup, in the formats of
 * /proc/self/mountinfo and /proc/<tid>/cgroup. Returns 0 or -1 (no such
 * hierarchy or line, a cgroup outside what its mount shows, or a
 * directory longer than len). */
int cg_task_path_in(const char *mountinfo, const char *cgroup, char *path,
		    size_t len);

/* The cgroup (its path in the hierarchy, "/" the root) named in cgroup,
 * a file in the format of /proc/<tid>/cgroup: the line of a v1 hierarchy
 * with the cpu controller, else cgroup v2's. Returns 0, or -1 (no such
 * line, or a path longer than len). */
int cg_task_cgroup_in(const char *cgroup, char *path, size_t len);

/* Move every task back home, put back a quota it changed and remove the
 * cgroup if cg_open created it. Safe to call twice and from an exit path. */
void cg_close(struct cg *cg);

#endif
