/*
 * cgroup: put threads or processes under a CPU bandwidth quota and read back
 * the throttling they got. cgroup v2 (cpu.max, cpu.stat) first; cgroup v1
 * (cpu.cfs_quota_us, cpu.cfs_period_us, cpu.stat) where that is what the
 * host has.
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

struct cg {
	char path[4096];	/* the cgroup directory */
	int version;		/* 1 or 2 */
	bool created;		/* made by cg_open, removed by cg_close */
	bool threaded;		/* v2 threaded subtree: threads move one by one */
	char home[4096];	/* where moved tasks go back to on cg_close */
};

struct cg_stat {
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_us;
	uint64_t usage_us;
};

/* Open a cgroup for a quota. where is NULL (create a new child named
 * "relay-<name>-<pid>" next to the caller's own cgroup), an absolute cgroup
 * directory that exists, or a systemd slice name ("loadgen.slice").
 * threaded asks for a v2 threaded subtree so single threads can be moved.
 * Returns 0, or -1 with err filled. */
int cg_open(struct cg *cg, const char *where, const char *name, bool threaded,
	    char *err, size_t errlen);

/* Set the quota: quota_us of CPU time every period_us (quota_us < 0: no
 * limit). Returns 0, or -1 with err filled. */
int cg_set_quota(struct cg *cg, int64_t quota_us, int64_t period_us,
		 char *err, size_t errlen);

/* Read the quota back (quota_us -1 when unlimited). */
int cg_get_quota(const struct cg *cg, int64_t *quota_us, int64_t *period_us);

/* Move a process (all its threads) or, in a threaded cgroup, one thread.
 * tid 0 means the calling thread. Returns 0, or -1 with err filled. */
int cg_add_process(struct cg *cg, pid_t pid, char *err, size_t errlen);
int cg_add_thread(struct cg *cg, pid_t tid, char *err, size_t errlen);

/* Read cpu.stat. Returns 0, or -1 when it cannot be read. */
int cg_read_stat(const struct cg *cg, struct cg_stat *st);

/* Move every task back home and remove the cgroup if cg_open created it.
 * Safe to call twice and from an exit path. */
void cg_close(struct cg *cg);

#endif
