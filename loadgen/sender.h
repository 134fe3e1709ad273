/*
 * sender: one sender/receiver thread with its own libevent loop. It sends
 * its share of the schedule (sched) on its flows (connected UDP sockets,
 * or TCP connections carrying fixed-size messages: stream), catching up in
 * sendmmsg bursts when it is behind, matches replies
 * (track) and records latency from the intended send time (corrected)
 * and from the actual send time (uncorrected) to the reply's arrival in
 * the socket (the kernel's receive timestamp), and the schedule error
 * (actual minus intended send time), all in microseconds.
 *
 * Life: sender_start spawns the thread, which pins itself and reports its
 * tid; the caller may then move it into a cgroup; sender_go starts the
 * schedule; the thread ends after its last packet once every reply is in
 * or the reply timeout has passed, or when sender_stop says so.
 */
#ifndef LOADGEN_SENDER_H
#define LOADGEN_SENDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "sched.h"
#include "series.h"
#include "slow.h"
#include "stream.h"
#include "track.h"

#define SENDER_BATCH 64		/* datagrams per sendmmsg/recvmmsg */

struct sender_conf {
	int idx, nthreads;
	const int *fds;		/* this thread's flows */
	int nfds;
	uint32_t run_id;
	size_t size;		/* datagram payload bytes */
	double rate;		/* all threads together */
	uint64_t total;		/* packets in the whole run */
	int64_t timeout_ns;	/* a reply later than this is late */
	int cpu;		/* pin to it; -1: no pinning */
	int rt_prio;		/* SCHED_FIFO at it; 0: stay SCHED_OTHER */
	bool epoll_timer;	/* no EVENT_BASE_FLAG_PRECISE_TIMER */
	int64_t spin_ns;	/* busy-wait this long before a send; 0: never */
	int64_t list_over_ns;	/* list replies slower than this; 0: none */
	size_t list_cap;	/* at most this many of them */
	bool stream;		/* the flows are TCP connections */
	struct series *series;	/* NULL: no time series */
};

struct sender;

/* One flow (socket) of a sender. */
struct sender_flow {
	struct sender *s;
	int fd;
	struct event *rd, *wr;	/* wr: stream flows with a write pending */
	struct stream st;	/* stream flows only */
	bool dead;		/* the connection failed or was closed */
};

struct sender {
	struct sender_conf c;
	pthread_t thread;
	bool spawned;		/* thread exists and is not joined yet */
	pid_t tid;
	struct event_base *base;
	struct event *timer, *stop_ev;
	struct sender_flow *flows;	/* c.nfds of them */
	struct sched sched;
	struct track track;
	struct hist corrected, uncorrected, sched_err;
	struct series_local series;
	struct slow slow;	/* replies slower than c.list_over_ns */
	uint64_t sent, send_errors, refused;	/* relaxed atomics */
	int64_t last_send_ns;
	int64_t drain_until;	/* 0 while sending */
	int stop;		/* 1: stop sending and drain; 2: end now */
	pthread_mutex_t mu;	/* guards ready/go/start_ns with cond */
	pthread_cond_t cond;
	bool ready, go;
	int64_t start_ns;
	bool done;		/* the thread has finished (relaxed atomic) */
	char err[512];		/* why the thread failed, "" when it did not */
	uint8_t *sbuf, *rbuf;	/* SENDER_BATCH datagrams each */
};

/* Set s up and spawn its thread; returns once the thread is pinned and
 * its tid known. Returns 0, or -1 with err filled. */
int sender_start(struct sender *s, const struct sender_conf *c, char *err,
		 size_t errlen);

/* Start the schedule: packet 0 is due at start_ns (CLOCK_MONOTONIC). */
void sender_go(struct sender *s, int64_t start_ns);

/* From another thread: stop sending (now false: still wait for replies up
 * to the timeout) or end at once (now true). */
void sender_stop(struct sender *s, bool now);

/* True once the thread has finished its work (it may still be exiting). */
bool sender_done(const struct sender *s);

/* Wait for the thread to end. Returns 0, or -1 when it failed (s->err). */
int sender_join(struct sender *s);

/* Account one reply of len bytes that came back at now (CLOCK_MONOTONIC):
 * its latencies go into the histograms, or it counts as foreign or
 * duplicated. The thread's own; exported for tests that feed it bytes. */
void sender_reply(struct sender *s, const uint8_t *buf, size_t len,
		  int64_t now);

/* Release what sender_start allocated. */
void sender_free(struct sender *s);

#endif
