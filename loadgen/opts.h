/*
 * opts: loadgen's command line, for a single run and for a sweep, parsed
 * into one struct with every default filled in. Every error names the flag
 * and the bad value and says what would be right.
 */
#ifndef LOADGEN_OPTS_H
#define LOADGEN_OPTS_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "opt.h"

#define OPTS_MAX_CPUS	256
#define OPTS_MAX_SLO	8
#define OPTS_MAX_THREADS 256
#define OPTS_MAX_SPIN_US 10000	/* beyond the 1 ms steps of --timer epoll */
#define OPTS_MAX_LIST_US 600000000	/* ten minutes */

enum opts_mode { OPTS_RUN, OPTS_SWEEP, OPTS_ECHO, OPTS_HELP };
enum opts_sweep { OPTS_SWEEP_RATE, OPTS_SWEEP_QUOTA };

/* One service level objective: percentile pct (100 for max) at most us. */
struct opts_slo {
	char name[16];		/* "p99", "p99_9", "max" */
	double pct;
	int64_t us;
};

struct opts {
	enum opts_mode mode;
	struct addr target;
	char target_text[ADDR_TEXT_MAX];
	double rate;		/* packets per second, all threads */
	double duration_s;
	int threads, flows;
	int size;		/* datagram payload bytes */
	int cpus[OPTS_MAX_CPUS];
	int ncpus;		/* 0: not pinned */
	double quota_pct;	/* < 0: no quota; 100 = one CPU */
	int64_t period_us;
	const char *cgroup;	/* existing cgroup or slice; NULL: create */
	bool quota_threads;	/* quota on the sender threads only */
	const char *json, *hgrm, *hlog, *timeseries, *csv;
	int64_t window_ms;
	int64_t timeout_ms;	/* a reply later than this is late; drain time */
	bool probe;
	bool epoll_timer;	/* pace with epoll_wait timeouts, not a timerfd */
	int spin_us;		/* busy-wait before each send; 0: off */
	int progress;		/* -1 auto (tty), 0 off */
	int rt_prio;		/* sender threads SCHED_FIFO at this; 0: no */
	int list_over_us;	/* list replies slower than this; 0: none */
	const char *watch_cgroup;	/* report this cgroup's throttling too */
	/* sweep */
	enum opts_sweep sweep;
	double from, to;	/* rates, or quota percentages */
	int steps;		/* 0 with search */
	bool search;		/* find the capacity instead of stepping */
	double resolution_pct;	/* search: bisect until within this */
	int searches;		/* search: how many, one after the other */
	double start;		/* search: the first one's warm start; 0: none */
	int step_samples;	/* sweep: a step ends once it sent this many
				 * (at least 1 s); 0: each lasts duration_s */
	struct opts_slo slo[OPTS_MAX_SLO];
	int nslo;
	int64_t pause_ms;
	int repeat;		/* extra runs of a non-monotonic sweep's steps */
	/* echo */
	struct addr listen;
	int addr_flags;		/* addr_parse's: ADDR_NUMERIC never resolves */
	int service_us;		/* busy time per datagram; 0: none */
};

/* Every flag as lib/opt's descriptors (opts.c's table), for --help, the
 * defaults and the check of loadgen(1). */
extern const struct opt opts_table[];
extern const int opts_ntable;

/* Every default, before opts_parse (which only sets what argv says). */
void opts_defaults(struct opts *o);

/* Parse argv ("loadgen [sweep|echo] FLAGS") into o, which opts_defaults
 * prepared. Returns 0, or -1 with err filled (the caller exits 64). */
int opts_parse(struct opts *o, int argc, char **argv, char *err, size_t errlen);

/* Print the usage text. */
void opts_usage(FILE *out);

/* Parse "20000", "20k", "1.5M" (per second). Returns 0 or -1. */
int opts_parse_rate(const char *s, double *rate);

/* Parse "30", "30s", "500ms", "250us", "2m" into microseconds. Returns 0
 * or -1. */
int opts_parse_time_us(const char *s, int64_t *us);

/* Parse "p99=1ms,max=20ms" into slo (room for max). Returns the number of
 * objectives or -1. */
int opts_parse_slo(const char *s, struct opts_slo *slo, int max);

#endif
