/*
 * tcp: the stream path of a loop thread. A listener (one SO_REUSEPORT
 * socket per loop) accepts connections; each is relayed both ways to the
 * upstream through a struct sock at each end, plain or TLS alike:
 *
 *   accept -> [client TLS handshake] -> connect -> [upstream TLS handshake]
 *          -> relay both directions -> half-close each -> close
 *
 * Every step is non-blocking on the loop's epoll set. Each direction has
 * one bounded buffer; a side is read only while the buffer it fills has
 * room (so a peer that does not drain slows its sender down through TCP's
 * own window) and watched for EPOLLOUT only while something waits to be
 * written to it. Each phase has a deadline (handshake, connect, idle); a
 * connection idle with bytes still waiting for a peer that does not read is
 * closed and counted as stalled. A connection limit per loop and running
 * out of descriptors pause accepting (counted) instead of spinning.
 *
 * Silence is not allowed to hold those slots: optionally a client must
 * send its first byte within a deadline counted from its accept, and one
 * source address (IPv6: its /64) may hold only so many of a loop's
 * connections; the next is reset at once.
 *
 * Latency: from the kernel receive time of a burst read from one side (or,
 * without kernel_stamps, from its read) to the moment its first byte was
 * written to the other, microseconds, through the owner's record function.
 * Kernel stamps include the time the bytes waited for the loop to wake, the
 * delay this project is about; their price is host-wide, since while any
 * socket asks for them the kernel stamps every packet it receives. With
 * them the first read after an epoll_wait wake-up also measures that wait
 * on its own (TCP_LAT_WAKE), as the datagram path does.
 */
#ifndef RELAY_TCP_H
#define RELAY_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "addr.h"
#include "list.h"
#include "loop.h"
#include "sock.h"

struct tls;

#define TCP_MAX_LISTEN	16

/* Why connections end, counted per listener. */
#define TCP_CLOSES(X) \
	X(done,            "both sides finished (FIN each way)") \
	X(idle,            "idle longer than the idle timeout") \
	X(stalled,         "a peer did not read what was waiting for it") \
	X(client_reset,    "the client reset or failed") \
	X(upstream_reset,  "the upstream reset or failed") \
	X(handshake,       "the client's TLS handshake failed or timed out") \
	X(connect_failed,  "the upstream refused or could not be reached") \
	X(connect_timeout, "the upstream did not answer in time") \
	X(upstream_tls,    "the TLS handshake with the upstream failed") \
	X(silent,          "the client sent nothing before the first-byte deadline") \
	X(shutdown,        "the listener was removed or the relay stopped")

/* Per listener. */
#define TCP_LCOUNTERS(X) \
	X(accepted,        "Connections accepted") \
	X(rx_bytes,        "Bytes received from clients") \
	X(tx_bytes,        "Bytes sent to clients") \
	X(paused_limit,    "Times accepting paused: max_conns reached") \
	X(paused_no_fd,    "Times accepting paused: out of file descriptors") \
	X(accept_errors,   "accept() failed otherwise") \
	X(refused_source,  "Connections reset at once: their source held max_conns_per_source")

/* For the upstream. */
#define TCP_UCOUNTERS(X) \
	X(connects,        "Connections attempted") \
	X(connected,       "Connections established (TLS included)") \
	X(rx_bytes,        "Bytes received from the upstream") \
	X(tx_bytes,        "Bytes sent to the upstream") \
	X(no_socket,       "No socket could be opened (descriptors)")

#define TCP_C(name, help) TCP_CLOSE_##name,
enum tcp_close { TCP_CLOSES(TCP_C) TCP_NCLOSES };
#undef TCP_C
#define TCP_C(name, help) TCP_L_##name,
enum tcp_lcounter { TCP_LCOUNTERS(TCP_C) TCP_NLCOUNTERS };
#undef TCP_C
#define TCP_C(name, help) TCP_U_##name,
enum tcp_ucounter { TCP_UCOUNTERS(TCP_C) TCP_NUCOUNTERS };
#undef TCP_C

/* Written by the loop only (relaxed atomics), read by anyone. */
struct tcp_stats {
	int id[TCP_MAX_LISTEN];		/* listener id of each slot, -1 none */
	uint64_t l[TCP_MAX_LISTEN][TCP_NLCOUNTERS];
	uint64_t closed[TCP_MAX_LISTEN][TCP_NCLOSES];
	uint64_t hs_failed[TCP_MAX_LISTEN][SOCK_NFAILS];	/* clients */
	int64_t active[TCP_MAX_LISTEN];
	uint64_t u[TCP_NUCOUNTERS];
	uint64_t u_hs_failed[SOCK_NFAILS];			/* upstream */
};

struct tcp_settings {
	struct addr upstream;		/* ADDR_TCP or ADDR_TLS */
	char upstream_host[256];	/* TLS: the name (or IP) to verify */
	struct tls *upstream_tls;	/* TLS upstream: its client context */
	struct tls *server_tls;		/* tls:// listeners: their context */
	int buffer;			/* bytes buffered per direction */
	int max_conns;			/* per loop */
	int max_per_source;		/* per loop and source address, 0: any */
	int handshake_ms, connect_ms, idle_ms;
	int first_byte_ms;		/* from accept to the client's first
					 * byte, 0: no deadline */
	bool kernel_stamps;		/* latency from the kernel receive time */
};

struct tcp_conn;
struct tcp_loop;

/* What a recorded latency measures (see above). */
enum tcp_latency {
	TCP_LAT_RELAY,		/* a burst: received (or read) to written on */
	TCP_LAT_WAKE,		/* the first stamped read: received to wake-up */
};

struct tcp_listener {
	struct loop_handler h;
	struct tcp_loop *t;
	int fd;			/* -1: slot unused */
	int id;
	bool tls;		/* terminate TLS (the settings' server_tls) */
	bool paused;		/* not accepting: limit or descriptors */
};

struct tcp_loop {
	struct loop *loop;
	struct tcp_settings set;
	struct tcp_listener ls[TCP_MAX_LISTEN];
	/* Connections by phase, each list in its deadline's order. */
	struct list handshaking, connecting, relaying;
	struct list unheard;		/* relaying, the client silent so far */
	struct tcp_conn *dying, *dead;	/* closed, freed two ticks later */
	int nconns;
	struct tcp_conn **by_source;	/* hash chains of open connections */
	uint32_t source_mask;		/* buckets - 1 */
	uint64_t source_seed;		/* random: clients choose addresses */
	int64_t resume_ns;		/* out of descriptors: retry accept then */
	struct tcp_stats stats;
	void (*record)(void *arg, enum tcp_latency what, int64_t us);
	void *record_arg;
};

/* Prepare t on loop l; latencies go to record(arg, what, us). */
void tcp_loop_init(struct tcp_loop *t, struct loop *l,
		   const struct tcp_settings *set,
		   void (*record)(void *arg, enum tcp_latency what, int64_t us),
		   void *arg);

/* Close every connection and listener and free what they hold. */
void tcp_loop_free(struct tcp_loop *t);

/* Replace the settings (a reload); connections already open keep going
 * to the upstream they have, and handshakes begun keep their context. */
void tcp_loop_configure(struct tcp_loop *t, const struct tcp_settings *set);

/* A listening socket for a (SO_REUSEPORT, so each loop has its own).
 * Returns the fd, or -1 with err filled (the address and why). */
int tcp_open_listener(const struct addr *a, char *err, size_t errlen);

/* Start accepting on the listening socket fd, TLS terminated with the
 * settings' server_tls when tls, counted under id. Returns 0 (fd now
 * belongs to t), or -1/errno (fd stays the caller's). */
int tcp_add_listener(struct tcp_loop *t, int id, int fd, bool tls);

/* Stop accepting on listener id and close its connections. */
void tcp_remove_listener(struct tcp_loop *t, int id);

/* The slot listener id occupies in t->stats, or -1. */
int tcp_listener_slot(const struct tcp_loop *t, int id);

/* Stop accepting on every listener (a drain); connections go on. */
void tcp_stop_listening(struct tcp_loop *t);

/* Call from the loop's timer: deadlines, accept back-off, freeing. */
void tcp_tick(struct tcp_loop *t);

/* One listener's counters summed over the loops. */
struct tcp_totals {
	uint64_t l[TCP_NLCOUNTERS];
	uint64_t closed[TCP_NCLOSES];
	uint64_t hs_failed[SOCK_NFAILS];
	int64_t active;
};

/* Sum listener id's counters over n loops' stats into out. */
void tcp_stats_listener(struct tcp_totals *out, const struct tcp_stats *const *s,
			int n, int id);

/* Sum the upstream counters over n loops' stats. */
void tcp_stats_upstream(uint64_t u[TCP_NUCOUNTERS], uint64_t hs[SOCK_NFAILS],
			const struct tcp_stats *const *s, int n);

/* A listener as the metrics name it. */
struct tcp_label {
	int id;
	char text[ADDR_TEXT_MAX];
};

/* The same counts as members of the JSON objects listeners (one per
 * label, named by its text) and upstreams (one, named upstream). */
void tcp_json(json_t *listeners, json_t *upstreams,
	      const struct tcp_stats *const *s, int n,
	      const struct tcp_label *labels, int nl, const char *upstream);

/* Names and help texts of the counters, for the metrics. */
const char *tcp_close_name(enum tcp_close c);
const char *tcp_close_help(enum tcp_close c);
const char *tcp_lcounter_name(enum tcp_lcounter c);
const char *tcp_lcounter_help(enum tcp_lcounter c);
const char *tcp_ucounter_name(enum tcp_ucounter c);
const char *tcp_ucounter_help(enum tcp_ucounter c);

#endif
