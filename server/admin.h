/*
 * admin: the HTTP endpoint (libevent's evhttp) on the main thread, which is
 * not real-time and not pinned to the loops' CPUs. It only reads what the
 * loops publish (struct stats, the heartbeat), never their private state.
 *
 *   /metrics                 Prometheus text format (datagrams: totals,
 *                            then relay_udp_* per listener and upstream;
 *                            streams: relay_tcp_*)
 *   /stats                   JSON summary (docs/formats.md percentiles),
 *                            per listener and upstream too
 *   /hgrm/rx_latency         HdrHistogram percentile distribution (ms)
 *   /hgrm/wake_latency
 *   /hgrm/tick_lateness
 *   /healthz                 200 "ok", or 503 and why (a stalled loop,
 *                            draining, a listener's socket file gone)
 *
 * GET and HEAD (the headers and the body's length); other paths 404. evhttp
 * refuses the rest and closes: 400 a malformed request or one whose line
 * and headers pass 8 KiB, 413 a body, 501 another method.
 */
#ifndef RELAY_ADMIN_H
#define RELAY_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr.h"
#include "heartbeat.h"
#include "kstate.h"
#include "sockfile.h"
#include "stats.h"
#include "tcp.h"
#include "watch.h"

struct event_base;
struct admin;

/* What the endpoint shows; owned by the caller, read at each request. */
struct admin_view {
	struct stats *const *stats;
	int n;
	const struct stats_sched *sched;
	const struct heartbeat_file *hb;
	const bool *draining;
	int64_t start_ns;	/* CLOCK_MONOTONIC */
	int tick_us;
	/* Datagrams: the udp:// listeners (*nudp_labels of them) and the
	 * upstreams (*nudp_upstreams) to show. */
	const struct stats_label *udp_labels;
	const int *nudp_labels;
	const struct sockfile *udp_files;	/* each one's (none: not a
						 * unix:///PATH); NULL: none */
	const struct stats_label *udp_upstreams;
	const int *nudp_upstreams;
	/* Streams: each loop's counters, the tcp:// and tls:// listeners to
	 * show (*ntcp_labels of them) and the upstream's name ("": none). */
	const struct tcp_stats *const *tcp;
	const struct tcp_label *tcp_labels;
	const int *ntcp_labels;
	const char *tcp_upstream;
	const struct stats_reloads *reloads;	/* NULL: none shown */
	const struct kstate *kernel;	/* NULL: not shown */
	const struct watch *watch;	/* the watched groups; NULL: none */
};

/* The endpoint's own counts, for /metrics. */
struct admin_counts {
	uint64_t no_fd;		/* accepting failed: out of descriptors */
	uint64_t conns;		/* connections open now */
	uint64_t capped;	/* times accepting stopped at the connection cap */
	uint64_t timed_out;	/* connections shut past their deadline */
	uint64_t evicted;	/* connections shut to make room at the cap */
};

/* Bind a (port 0: any free port) and serve on base. Returns the handle, or
 * NULL with err filled. */
struct admin *admin_open(struct event_base *base, const struct addr *a,
			 const struct admin_view *v, char *err, size_t errlen);

/* Serve on fd, a listening stream socket of any family (admin_open's
 * TCP one; a test's AF_UNIX one), which the handle then owns. */
struct admin *admin_serve(struct event_base *base, int fd,
			  const struct admin_view *v, char *err, size_t errlen);

/* The port actually bound (admin_open). */
int admin_port(const struct admin *ad);

void admin_close(struct admin *ad);

/* {"listeners": {...}, "upstreams": {...}}: the counts of each listener and
 * upstream v shows, for stats_json. */
json_t *admin_json_parts(const struct admin_view *v);

/* 1 when every loop made progress within the last second (plus a tick),
 * else 0 with why filled. Also used for the systemd watchdog. */
int admin_healthy(const struct admin_view *v, char *why, size_t whylen);

/* 1 when every unix:///PATH listener's file is the one relay bound there,
 * else 0 with why naming the first that was removed or replaced. /healthz
 * says so; the watchdog does not: it is for stalls, and SIGHUP mends it. */
int admin_files_present(const struct admin_view *v, char *why,
			size_t whylen);

#endif
