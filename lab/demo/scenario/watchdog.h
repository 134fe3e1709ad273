/*
 * watchdog: notice when the relay stops making progress, lift the senders'
 * CPU quota to end the stall, record when it ended, and put the quota back.
 *
 * The quota is written by a thread of its own pinned to the senders' CPU at
 * an RT priority above the relay: written from another CPU, cpu.max moves
 * the CFS bandwidth timer there and the effect stops recurring. The poller
 * (the calling thread) runs on another CPU and never uses epoll: it must
 * not take part in what it watches.
 */
#ifndef DEMO_WATCHDOG_H
#define DEMO_WATCHDOG_H

#include <jansson.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heartbeat.h"
#include "cgroup.h"

#define WD_MAX_STALLS 1024

struct wd_config {
	int poll_ms;		/* between heartbeat reads (1 ms during a stall) */
	int stall_ms;		/* no progress this long is a stall */
	int lift_ms;		/* restore the quota after this even if still stuck */
	int poll_cpu;		/* the poller's CPU */
	int writer_cpu;		/* the senders' CPU: cpu.max is written there */
	int prio;		/* SCHED_FIFO priority of both threads */
	int64_t origin_ns;	/* polls at origin_ns + whole milliseconds */
	int64_t quota_us, period_us;
};

/* Times in seconds since the relay started (its heartbeat's start time),
 * the zero of relay.timeseries.csv, so that events and latencies line up. */
struct wd_stall {
	double start_s;		/* the relay's last progress before it */
	double detected_s;
	double lift_s;		/* cpu.max written: no limit */
	double end_s;		/* first progress seen again; < 0 while stuck */
	double restore_s;	/* cpu.max written: the quota again */
	bool cleared;		/* ended while the quota was lifted */
	/* The relay loop's kernel stack when the stall was noticed, innermost
	 * frames first ("a < b < c"; "" when it cannot be read). As exact as
	 * the kernel's unwinder: a minimal kernel may guess frames. */
	char stack[200];
};

enum wd_request { WD_NONE, WD_LIFT, WD_RESTORE, WD_EXIT };

struct watchdog {
	struct wd_config cfg;
	struct cg *cg;
	struct heartbeat_map beat;
	int64_t t0_ns;		/* the relay's start, set by wd_run */
	FILE *events;		/* *.events.csv, docs/formats.md */

	struct wd_stall stalls[WD_MAX_STALLS];
	int nstalls;
	bool armed;		/* new stalls are noticed (while the senders send) */
	bool stuck;		/* a stall is going on */
	bool lifted;		/* the quota is lifted now */
	uint64_t polls;
	double max_poll_gap_ms;	/* the poller's own worst lateness */
	char problem[512];	/* first thing that went wrong, "" if none */

	pthread_t writer;
	bool writer_up;
	sem_t req_sem, done_sem;
	enum wd_request req;
	int req_status;
	int64_t req_done_ns;
	char req_err[512];
};

/* Prepare w and start the writer thread (pinned, SCHED_FIFO). Returns 0,
 * or -1 with err filled. */
int wd_init(struct watchdog *w, const struct wd_config *cfg, struct cg *cg,
	    FILE *events, char *err, size_t errlen);

/* Set the quota from the writer thread, on the senders' CPU: the CFS
 * bandwidth timer is armed where the quota is written, and the effect
 * needs it on the senders' CPU. Returns 0, or -1 with err filled. */
int wd_apply_quota(struct watchdog *w, char *err, size_t errlen);

/* Watch the heartbeat at beat_path. Pins and raises the calling thread,
 * then polls until keep_going(arg) returns false (asked once per poll).
 * Returns 0, or -1 with err filled when it cannot watch at all. */
int wd_run(struct watchdog *w, const char *beat_path,
	   bool (*keep_going)(struct watchdog *w, void *arg), void *arg,
	   char *err, size_t errlen);

/* The stalls as scenario.json's "stalls" (lab/demo/README.md). */
json_t *wd_stalls_json(const struct watchdog *w);

/* Put the quota back if it is lifted and stop the writer thread. */
void wd_close(struct watchdog *w);

#endif
