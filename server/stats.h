/*
 * stats: what a loop thread measures about itself. Each loop owns one
 * struct stats and is its only writer (relaxed atomic stores, no locks, no
 * allocation); the admin thread reads them at any time and merges them into
 * a snapshot for /metrics, STATUS= and the stats file.
 *
 * Latencies, microseconds:
 *   rx_latency    kernel receive timestamp (SO_TIMESTAMPNS) to the loop
 *                 handling the datagram, both directions; for streams, to
 *                 the write of a burst read (from the read itself when
 *                 tcp_kernel_stamps is off, see tcp.h);
 *   wake_latency  kernel receive timestamp of the first datagram (or
 *                 stamped stream read) after an epoll_wait wake-up to that
 *                 wake-up: how long data waited before the loop was woken;
 *   tick_lateness how late each timerfd expiry was handled (now minus the
 *                 first expiry not yet handled): a stalled loop shows here
 *                 even with no traffic.
 *
 * The datagram path also keeps a share of its counts per listener slot and
 * per upstream slot of the loop (struct stats_part), fixed arrays the loop
 * charges through stats_count and stats_drop for the listener and upstream
 * whose datagram it is handling (cur_listener, cur_upstream). A slot
 * reused by a reload starts from zero under its new id; readers sum the
 * loops' slots that carry the id they show.
 */
#ifndef RELAY_STATS_H
#define RELAY_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "addr.h"
#include "hist.h"
#include "results.h"

#define STATS_COUNTERS(X) \
	X(rx_packets,       "Datagrams received from clients") \
	X(rx_bytes,         "Bytes received from clients") \
	X(tx_packets,       "Datagrams sent to the upstream (or echoed)") \
	X(tx_bytes,         "Bytes sent to the upstream (or echoed)") \
	X(reply_packets,    "Datagrams received from the upstream") \
	X(reply_bytes,      "Bytes received from the upstream") \
	X(reply_tx_packets, "Replies delivered to clients") \
	X(reply_tx_bytes,   "Bytes of replies delivered to clients") \
	X(flows_created,    "Flows created") \
	X(flows_expired,    "Flows closed after flow_idle_ms without traffic") \
	X(flows_evicted,    "Flows closed to make room (max_flows reached): idle longest, not waiting for a reply first") \
	X(flows_closed,     "Flows closed by a reload or drain") \
	X(flows_moved,      "Flows moved to the configured upstream: theirs refused them or a reload replaced it") \
	X(flows_undelivered, "Flows closed after 16 replies in a row could not be delivered: a client that does not read, or is gone") \
	X(ticks,            "Timer ticks handled") \
	X(ticks_missed,     "Timer expirations that passed unhandled (stalls)") \
	X(rt_demotions,     "Times a SCHED_FIFO loop busy beyond rt_budget dropped to SCHED_OTHER") \
	X(ticks_demoted,    "Timer ticks handled while dropped to SCHED_OTHER for that") \
	X(wakeups,          "epoll_wait calls that returned events") \
	X(batches,          "recvmmsg batches") \
	X(gro_runs,         "Coalesced runs received (udp_gro); their datagrams count one by one")

/* What a late wake-up was (relay_late_wakeups_total{wakeup}): who woke the
 * loop decides whether the kernel's epoll fix can protect it. An RT
 * sender's ep_poll_callback takes ep->lock, and since the fix a throttled
 * holder of it inherits the sender's priority; relay's timer tick is
 * delivered by its CPU's timer softirq, which on PREEMPT_RT runs at
 * SCHED_OTHER and lends a throttled holder nothing (only the task-based
 * throttle of 6.18 keeps throttled tasks from holding it up). */
#define STATS_WAKEUPS(X) \
	X(datagram,      "a datagram's wait for the wake-up that found it (relay_wake_latency_seconds), from a sender relay cannot name (UDP) or a real-time one (AF_UNIX): the wake-up the epoll fix protects") \
	X(stream,        "the same of a stamped stream read: the wake-up the epoll fix protects") \
	X(non_rt_sender, "the same of an AF_UNIX datagram whose sender was not real-time when relay looked: its own delays between stamping and waking relay (its throttle) count in it, and no fix shortens them") \
	X(tick,          "relay's timer tick, late_us after it was due: delivered by its CPU's timer softirq, a non-RT waker on PREEMPT_RT kernels before the task-based throttle (6.18)")

#define STATS_DROPS(X) \
	X(oversize,         "larger than max_datagram (truncated on receive)") \
	X(rcvbuf_overflow,  "dropped by the kernel at a listener socket (receive buffer full)") \
	X(upstream_refused, "the upstream refused (ICMP port unreachable)") \
	X(upstream_error,   "sending to the upstream failed otherwise") \
	X(tx_full,          "socket send buffer full") \
	X(no_flow_socket,   "no upstream socket could be opened for a new flow") \
	X(reply_failed,     "the reply could not be sent to the client") \
	X(draining,         "a new flow while draining (SIGTERM)") \
	X(flows_busy,       "a new flow while max_flows flows all wait for replies (flow_wait_ms)") \
	X(unnamed,          "from an AF_UNIX client whose socket has no name to reply to") \
	X(not_allowed,      "from an AF_UNIX client whose user and group unix_allow does not name")

#define STATS_ERRORS(X) \
	X(recv,             "recvmmsg or epoll_wait failed") \
	X(send,             "sendmmsg failed with an unexpected error") \
	X(upstream_refused, "ICMP port unreachable reported for a flow") \
	X(socket,           "socket() or connect() for a flow failed")

/* S_rx_packets, D_oversize, E_recv, ... */
#define STATS_C(name, help) S_##name,
#define STATS_D(name, help) D_##name,
#define STATS_E(name, help) E_##name,
#define STATS_W(name, help) W_##name,
enum stats_counter { STATS_COUNTERS(STATS_C) STATS_NCOUNTERS };
enum stats_wakeup { STATS_WAKEUPS(STATS_W) STATS_NWAKEUPS };
enum stats_drop { STATS_DROPS(STATS_D) STATS_NDROPS };
enum stats_error { STATS_ERRORS(STATS_E) STATS_NERRORS };
#undef STATS_C
#undef STATS_D
#undef STATS_E
#undef STATS_W

/* The counters also kept per listener: what its clients sent and got. */
#define STATS_LCOUNTERS(X) \
	X(rx_packets) X(rx_bytes) X(reply_tx_packets) X(reply_tx_bytes) \
	X(flows_created)
/* The counters and drops also kept per upstream (every drop is also kept
 * per listener). */
#define STATS_UCOUNTERS(X) \
	X(tx_packets) X(tx_bytes) X(reply_packets) X(reply_bytes)
#define STATS_UDROPS(X) \
	X(upstream_refused) X(upstream_error)

#define STATS_CBIT(name) | 1ULL << S_##name
#define STATS_DBIT(name) | 1ULL << D_##name
#define STATS_LMASK	(0 STATS_LCOUNTERS(STATS_CBIT))
#define STATS_UMASK	(0 STATS_UCOUNTERS(STATS_CBIT))
#define STATS_UDMASK	(0 STATS_UDROPS(STATS_DBIT))

#define STATS_MAX_LISTEN	16	/* CONF_MAX_LISTEN */
/* UDP upstreams told apart: upstream id i lives in slot i % this. */
#define STATS_MAX_UPSTREAM	4

/* One listener's or upstream's share of a loop's counts. */
struct stats_part {
	int id;				/* -1: unused */
	uint64_t counter[STATS_NCOUNTERS];
	uint64_t drop[STATS_NDROPS];
	int64_t flows_active;		/* listeners */
};

/* A listener or upstream as the metrics name it. */
struct stats_label {
	int id;
	char text[ADDR_TEXT_MAX];
};

/* A late wake-up: a tick handled at least late_us after it was due
 * (stats_record_tick), or a wake-up whose first data had waited that long
 * for it (stats_record_wake), when it ended (CLOCK_MONOTONIC), how late
 * and what it was (enum stats_wakeup). Data's wait holds its sender's
 * delays too (a co-tenant that stamped its datagram and was throttled
 * before it woke the loop): what relay can say of the sender is the kind
 * (non_rt_sender). The loop keeps the last STATS_LATE_RING in a ring for
 * the main thread (watch.h), which reads them with stats_late_read; a
 * reader that falls a whole ring behind loses the oldest. */
#define STATS_LATE_RING	256
struct stats_late {
	int64_t end_ns, late_ns;
	int kind;			/* enum stats_wakeup */
};

/* One row of the per-window time series (windows of STATS_WINDOW_NS). */
#define STATS_WINDOW_NS	100000000LL
#define STATS_ROWS	36000		/* one hour; older rows are overwritten */
struct stats_row {
	int64_t window;			/* index since the run started */
	struct results_window tick, rx;
};

struct stats {
	uint64_t counter[STATS_NCOUNTERS];
	uint64_t drop[STATS_NDROPS];
	uint64_t error[STATS_NERRORS];
	int64_t flows_active;
	struct hist rx, wake, tick;
	/* Owned by the loop thread only; read after it has stopped. */
	struct hist win_rx, win_tick;
	int64_t start_ns, win_end_ns;
	struct stats_row *rows;
	uint64_t nrows;
	struct stats_part listener[STATS_MAX_LISTEN];
	struct stats_part upstream[STATS_MAX_UPSTREAM];
	int cur_listener, cur_upstream;	/* loop only: whom to charge */
	int64_t late_us;		/* set before the loop runs */
	uint64_t late_wakeups[STATS_NWAKEUPS];	/* by kind */
	uint64_t nlate;			/* late wake-ups ever noted */
	struct stats_late late[STATS_LATE_RING];
};

/* A merged copy, for readers. */
struct stats_snapshot {
	uint64_t counter[STATS_NCOUNTERS];
	uint64_t drop[STATS_NDROPS];
	uint64_t error[STATS_NERRORS];
	uint64_t late_wakeups[STATS_NWAKEUPS];
	int64_t flows_active;
	struct hist rx, wake, tick;
};

/* What the loop threads got from the scheduler. */
struct stats_sched {
	const char *policy;		/* "SCHED_FIFO" or "SCHED_OTHER" */
	int priority;
	char why[512];			/* why not real-time, or "" */
};

/* How reloads ended (the main thread's, for /metrics). */
struct stats_reloads {
	uint64_t applied;	/* every loop took the new configuration */
	uint64_t partial;	/* some loop did not take it in time */
	uint64_t failed;	/* refused (the file, a certificate, a port) */
	int loops_behind;	/* loops the last reload did not reach */
};

int stats_init(struct stats *s, int64_t start_ns);
void stats_free(struct stats *s);

/* Writer side (the loop thread). */
static inline void stats_add(uint64_t *c, uint64_t n)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n,
			 __ATOMIC_RELAXED);
}
static inline void stats_set(int64_t *v, int64_t x)
{
	__atomic_store_n(v, x, __ATOMIC_RELAXED);
}
/* Count n in the totals and in the current listener's and upstream's
 * share where c (or d) is kept for them. */
static inline void stats_count(struct stats *s, enum stats_counter c,
			       uint64_t n)
{
	stats_add(&s->counter[c], n);
	if (STATS_LMASK >> c & 1)
		stats_add(&s->listener[s->cur_listener].counter[c], n);
	if (STATS_UMASK >> c & 1)
		stats_add(&s->upstream[s->cur_upstream].counter[c], n);
}
static inline void stats_drop(struct stats *s, enum stats_drop d, uint64_t n)
{
	stats_add(&s->drop[d], n);
	stats_add(&s->listener[s->cur_listener].drop[d], n);
	if (STATS_UDMASK >> d & 1)
		stats_add(&s->upstream[s->cur_upstream].drop[d], n);
}
/* Listener slot l has delta flows more. */
static inline void stats_flows(struct stats *s, int l, int delta)
{
	stats_set(&s->listener[l].flows_active,
		  s->listener[l].flows_active + delta);
}
/* Zero slot p and give it to id (the loop, when a reload reuses it). */
void stats_part_reset(struct stats_part *p, int id);
void stats_record_rx(struct stats *s, int64_t us);
/* A tick us late: into its histograms, and noted as a late wake-up when
 * it is at least s->late_us (0: never). */
void stats_record_tick(struct stats *s, int64_t us);
/* Data's wait of us for the wake-up that found it, kind W_datagram or
 * W_stream: into the wake histogram, and noted as a late wake-up when it
 * is at least s->late_us. sender: the AF_UNIX sender's pid (its
 * credentials), 0 when there is none; a late wake-up from a sender that
 * is not real-time is W_non_rt_sender. */
void stats_record_wake(struct stats *s, enum stats_wakeup kind, int64_t us,
		       int sender);

/* Close the time-series window if now_ns (CLOCK_MONOTONIC) passed its end,
 * or anyway when final (the loop is stopping). */
void stats_roll_window(struct stats *s, int64_t now_ns, bool final);

/* Reader side. */
int stats_snapshot_init(struct stats_snapshot *snap);
void stats_snapshot_free(struct stats_snapshot *snap);
void stats_snapshot_take(struct stats_snapshot *snap, struct stats *const *s,
			 int n);

/* The late wake-ups loop s noted since *cursor (which moves past them),
 * at most max into out, oldest first. Returns how many; *lost, those it
 * had already overwritten. */
int stats_late_read(const struct stats *s, uint64_t *cursor,
		    struct stats_late *out, int max, uint64_t *lost);

/* Sum the share of listener id (upstream: false) or upstream id (true)
 * over n loops into out. */
void stats_part_sum(struct stats_part *out, struct stats *const *s, int n,
		    bool upstream, int id);

/* Add the same shares to the JSON objects listeners and upstreams, one
 * member each, named by its label. */
void stats_json_parts(json_t *listeners, json_t *upstreams,
		      struct stats *const *s, int n,
		      const struct stats_label *l, int nl,
		      const struct stats_label *u, int nu);

/* The JSON summary (docs/formats.md percentile objects), with the members
 * of more (NULL: none; the reference is stolen) after the totals; caller
 * frees. */
char *stats_json(const struct stats_snapshot *snap,
		 const struct stats_sched *sched, double duration_s,
		 json_t *more);

/* The name of a file that goes with the stats file path: "dir/relay.json"
 * with "tick_lateness" and ".hgrm" is "dir/relay.tick_lateness.hgrm". */
void stats_derived(char *out, size_t len, const char *path, const char *mid,
		   const char *ext);

/* On exit: path (stats_json with more), path-derived .hgrm files per
 * histogram and the .timeseries.csv from the loops' windows, each made next
 * to its name and renamed over it (newfile.h). Returns 0, or -1 with err. */
int stats_write_files(const char *path, const struct stats_snapshot *snap,
		      const struct stats_sched *sched, double duration_s,
		      json_t *more, struct stats *const *s, int n, char *err,
		      size_t errlen);

#endif
