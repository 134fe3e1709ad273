/*
 * watch: the co-tenants' cgroups named in watch_cgroups (their slices,
 * e.g. loadgen.slice), and relay's late wake-ups that overlapped a
 * throttled period of one of them: the evidence of the ready-list stall
 * without a trace.
 *
 * Everything here runs on the main thread, every watch_interval_ms: it
 * reads each group's cpu.stat and takes the late wake-ups the loops noted
 * in their rings (stats.h), so that no loop ever reads a file. A group
 * was throttled in the interval between two readings when its
 * nr_throttled or throttled_usec grew; since the kernel adds a throttle's
 * time to throttled_usec when it ends, that span reaches back by the time
 * it added. A late wake-up (stats.h: a late tick, from when it was due,
 * or data's late wake-up, from its kernel stamp, to when the loop woke)
 * that overlaps such a span counts once for that group, by its kind. The
 * resolution is the interval: a wake-up within one interval of a throttle
 * counts as overlapping it.
 *
 * On the task-based throttle model (6.18 and later, eb962f251fbb) a
 * group's throttled time starts when the first task of its hierarchy is
 * throttled (on its way back to user space), not when its quota ran out;
 * before it, when the quota ran out and the group was dequeued.
 */
#ifndef RELAY_WATCH_H
#define RELAY_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup.h"
#include "conf.h"
#include "stats.h"

#define WATCH_SPANS	64	/* throttled spans kept per group */
#define WATCH_PENDING	4096	/* late wake-ups kept to match */
/* How far back a late wake-up, or a throttled span, is matched. */
#define WATCH_HORIZON_NS	(10 * 1000000000LL)

struct watch_span {
	int64_t from_ns, to_ns;		/* CLOCK_MONOTONIC */
};

struct watch_group {
	char name[256];			/* as watch_cgroups names it */
	char dir[CONF_PATH_MAX];
	struct cg_stat stat;		/* the last reading that worked */
	int64_t read_ns;		/* when (0: none yet) */
	bool readable;			/* the last reading worked */
	/* Late wake-ups while it was throttled, by kind (enum stats_wakeup). */
	uint64_t late[STATS_NWAKEUPS];
	struct watch_span span[WATCH_SPANS];	/* a ring */
	uint64_t nspan;
};

struct watch_late {
	int64_t from_ns, to_ns;
	enum stats_wakeup kind;
	uint32_t counted;		/* a bit per group it counted for */
};

struct watch {
	struct watch_group g[CONF_MAX_WATCH];
	int n;
	int64_t late_us;		/* conf's, for /metrics */
	int interval_ms;
	struct watch_late pend[WATCH_PENDING];	/* a ring */
	uint64_t npend;
	uint64_t cursor[CONF_MAX_CPUS];		/* in each loop's ring */
	uint64_t lost;			/* late wake-ups a ring lost first */
};

/* Watch the groups c names, keeping the readings and counts of those it
 * watched already (the same directory); the loops' rings are read from
 * their ends on now (nloops of them). */
void watch_configure(struct watch *w, const struct conf *c,
		     struct stats *const *loops, int nloops);

/* One round: take the loops' late wake-ups, read each group's cpu.stat
 * and match the two; now_ns is CLOCK_MONOTONIC. */
void watch_poll(struct watch *w, struct stats *const *loops, int nloops,
		int64_t now_ns);

/* The two halves of a round, for tests: a late wake-up of kind that
 * ended at end_ns, late_ns late; group g's reading st at now_ns. */
void watch_late(struct watch *w, int64_t end_ns, int64_t late_ns,
		enum stats_wakeup kind);
void watch_reading(struct watch *w, int g, const struct cg_stat *st,
		   int64_t now_ns);

#endif
