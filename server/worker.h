/*
 * worker: one loop thread per configured CPU: pinned, SCHED_FIFO (within
 * its rt_budget, see budget.h) or SCHED_OTHER, memory locked, stack
 * pre-faulted; it owns one SO_REUSEPORT socket per listener (the datagram
 * and stream state, udp.h and tcp.h, on one epoll set), its statistics and
 * a timerfd tick. Reload and drain talk to it only through worker_command
 * (a mailbox and an eventfd), never by touching its state.
 */
#ifndef RELAY_WORKER_H
#define RELAY_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "addr.h"
#include "budget.h"
#include "conf.h"
#include "heartbeat.h"
#include "loop.h"
#include "peer.h"
#include "stats.h"
#include "tcp.h"
#include "udp.h"

/* What a reload or drain asks of a loop. Whoever holds a command owns what
 * it carries: the sockets add_fd[] and a reference to each TLS context in
 * tcp (worker_command says who holds it when). */
struct worker_cmd {
	bool drain;		/* stop listening, wait for replies, exit */
	int nremove;
	int remove_id[CONF_MAX_LISTEN];
	int nadd;
	int add_id[CONF_MAX_LISTEN];
	int add_fd[CONF_MAX_LISTEN];	/* ownership passes to the loop */
	enum addr_kind add_kind[CONF_MAX_LISTEN];
	struct addr upstream;
	int upstream_id;	/* the same id for the same upstream */
	struct tcp_settings tcp;
	int flow_idle_ms;
	int flow_wait_ms;
	int drain_ms;
	struct peer_list unix_allow;
	int state;		/* worker_command's and the loop's only */
};

/* What became of a command handed to a loop. */
enum worker_fate {
	WORKER_APPLIED,		/* applied; the caller frees it (an add the
				 * loop could not make has add_fd -1) */
	WORKER_TAKEN,		/* the loop took it and will apply and free
				 * it, but had not finished in time */
	WORKER_NOT_TAKEN,	/* never seen by the loop: the caller has it
				 * back, and all it carries */
};

struct worker {
	int index, cpu;
	pthread_t thread;
	/* Settings fixed at start-up. */
	int rt_priority, rt_budget, tick_us;
	bool allow_non_rt;
	bool sched_other;		/* SCHED_OTHER by choice */
	/* Set by a reload (only through a command). */
	int64_t drain_ns;

	struct loop loop;
	struct loop_handler tick_h, cmd_h;
	int tfd, efd;
	struct udp_loop udp;		/* udp:// listeners and their flows */
	struct tcp_loop tcp;		/* tcp:// and tls:// listeners */
	struct stats stats;
	struct budget budget;		/* SCHED_FIFO loops only */
	struct heartbeat_loop *hb;
	int64_t start_ns, next_tick_ns;	/* CLOCK_MONOTONIC */
	int64_t drain_deadline;		/* 0: not draining */
	bool stop;
	struct worker_cmd *cmd;		/* mailbox, swapped atomically */

	/* Start-up result, read by the main thread after worker_start. */
	int started;			/* 1 ok, -1 failed */
	bool realtime;
	char why[512];			/* why not real-time / why it failed */
};

/* Prepare w (allocations, timerfd, eventfd) for the given settings (the
 * upstream counted as id 0), with listener sockets ids[i]/fds[i] of
 * kinds[i] (ownership passes to w).
 * Returns 0, or -1 with err filled. */
int worker_init(struct worker *w, int index, int cpu, const struct conf *c,
		const struct tcp_settings *tcp, const int *ids, const int *fds,
		const enum addr_kind *kinds, int n, struct heartbeat_loop *hb,
		int64_t start_ns, char *err, size_t errlen);

/* Start the thread and wait until it has set itself up. Returns 0 when it
 * runs (real-time or, if allowed, not: see w->realtime and w->why), -1 when
 * it could not start (w->why says why; the thread has exited). */
int worker_start(struct worker *w);

/* Hand cmd (malloc'd) to the loop and wait up to timeout_ms until it is
 * applied; what became of it says who owns it now. */
enum worker_fate worker_command(struct worker *w, struct worker_cmd *cmd,
				int timeout_ms);

/* Close the sockets a command that no loop took carries, drop its TLS
 * references and free it. */
void worker_cmd_release(struct worker_cmd *cmd);

/* Wait for the thread to end (after a drain command) and free w. */
void worker_join(struct worker *w);

/* Free a worker that was initialised but never started. */
void worker_free(struct worker *w);

#endif
