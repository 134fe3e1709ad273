/*
 * udp: the datagram path of a loop thread. Sockets are non-blocking and
 * read and written in batches (recvmmsg/sendmmsg) into buffers allocated
 * once per loop; each datagram carries its kernel receive time
 * (SO_TIMESTAMPNS). What the kernel dropped at a listener socket (receive
 * buffer full) is read from the socket's counter (SO_MEMINFO), which,
 * unlike SO_RXQ_OVFL, does not wait for the next datagram to tell.
 *
 * A loop thread's datagram state (struct udp_loop: listener sockets, flow
 * table, buffers) is its own, as the stream state is tcp.h's: the owner
 * lends it the epoll loop, the statistics to charge and the heartbeat,
 * and calls in only through the functions below.
 */
#ifndef RELAY_UDP_H
#define RELAY_UDP_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "addr.h"
#include "flow.h"
#include "heartbeat.h"
#include "loop.h"
#include "peer.h"
#include "sockfile.h"
#include "stats.h"

#define UDP_MAX_LISTEN	STATS_MAX_LISTEN	/* a stats slot each */

/* The receive and send vectors of one loop, allocated once. */
struct udp_batch {
	int cap;
	int bufsize;
	struct mmsghdr *rx;		/* receive vector */
	struct mmsghdr *tx;		/* send vector, pointing into rx's buffers */
	struct iovec *iov;
	struct sockaddr_storage *name;
	char *buf;
	char *ctl;
	int64_t *ts_ns;			/* CLOCK_REALTIME receive time, 0 unknown */
	struct in6_addr *dst;		/* the address it was sent to (wildcard
					 * listeners; IPv4 in the first 4 bytes) */
	uint8_t *has_dst;
	char *txctl;			/* the source address of each reply, and
					 * the segment size of a run */
	uint16_t *seg;			/* segment size of a coalesced run
					 * (UDP_GRO), 0: one datagram */
	uint16_t *txseg;		/* the same for each send entry */
	struct ucred *cred;		/* an AF_UNIX sender's (has_cred) */
	uint8_t *has_cred;
	struct flow **txflow;		/* the flow a reply entry goes to,
					 * NULL: to the upstream */
	struct flow **undelivered;	/* flows whose replies kept failing,
					 * closed once the batch is sent */
	int nundelivered;
};

struct udp_loop;

/* A listener socket of one loop. */
struct udp_listener {
	struct loop_handler h;
	struct udp_loop *u;
	int fd;			/* -1: slot unused */
	int id;			/* the listener's id, stable across reloads */
	int slot;		/* its index, and its stats slot */
	uint32_t drops;		/* the socket's drop count last seen */
};

/* Fixed at start-up: the buffers are sized by them. */
struct udp_settings {
	int batch;		/* entries per recvmmsg/sendmmsg */
	int max_datagram;
	int socket_buffer;	/* SO_RCVBUF/SO_SNDBUF, 0: the kernel's */
	int max_flows;
	bool gro;
};

/* The datagram state of a loop thread. Its flows and listeners are
 * charged to the owner's stats (listener and upstream slots included). */
struct udp_loop {
	struct loop *loop;
	struct stats *stats;
	struct heartbeat_loop *hb;
	struct udp_settings set;
	/* What a reload may change. */
	struct addr upstream;		/* new flows' */
	int upstream_id, upstream_slot;	/* new flows' upstream's counts */
	int64_t idle_ns, wait_ns;
	bool draining;			/* new clients are turned away */
	struct peer_list allow;		/* AF_UNIX senders let in (unix_allow) */
	struct udp_listener ls[UDP_MAX_LISTEN];
	struct flow_table flows;
	struct udp_batch b;
};

/* Prepare u on loop l, counting into s (its listener and upstream slots
 * too) and beating hb as datagrams are relayed. Returns 0, or -1 with
 * errno (ENOMEM); u can be freed either way. */
int udp_loop_init(struct udp_loop *u, struct loop *l, struct stats *s,
		  struct heartbeat_loop *hb, const struct udp_settings *set);

/* Close every flow (counted as closed) and listener, and free u. */
void udp_loop_free(struct udp_loop *u);

/* New flows go to upstream (counted as upstream id); flows already open
 * keep counting under theirs (until STATS_MAX_UPSTREAM newer ones took its
 * slot). Flows idle for idle_ms expire; when the table is full, one that
 * waited wait_ms for its reply may be evicted. Datagrams on AF_UNIX
 * listeners are taken only from the senders allow lets in. */
void udp_loop_configure(struct udp_loop *u, const struct addr *upstream,
			int upstream_id, int idle_ms, int wait_ms,
			const struct peer_list *allow);

/* How a listener socket is made. */
struct udp_listen {
	int socket_buffer;	/* SO_RCVBUF/SO_SNDBUF bytes, 0: the kernel's */
	bool gro;
	int max_datagram, batch;	/* unix://: its send buffer's size */
	struct sockfile_perm perm;	/* unix:///PATH: its file's */
};

/* Replies in a row that may fail to reach a flow's client (not for want
 * of room in relay's own send buffer) before the flow is closed, counted
 * as flows_undelivered: an AF_UNIX client that does not read, or is gone. */
#define UDP_REPLY_FAILS		16

/* AF_UNIX clients that do not read whose queues of replies a unix://
 * listener's send buffer is sized to hold, besides a batch (udp.c). */
#define UDP_UNREAD_CLIENTS	16

/* A listener socket: bound to a, SO_REUSEPORT (one per loop), timestamps
 * on; bound to a wildcard address it also learns each datagram's
 * destination (IP_PKTINFO), so replies leave from the address the client
 * sent to. With l->gro, a run of datagrams of one flow arrives as one
 * entry (UDP_GRO) and leaves as one segmented write (UDP_SEGMENT): the
 * receiver still sees each datagram, the relay pays per run. A unix://
 * listener takes each sender's credentials (SO_PASSCRED), has a send
 * buffer of UDP_UNREAD_CLIENTS clients' queues, and at a path its file
 * is made as sockfile.h says, into file (else file is none). Returns the
 * fd with warn filled ("" or what falls short: the send buffer), or -1
 * with err filled (the address and why, e.g. "address already in use"). */
int udp_open_listener(const struct addr *a, const struct udp_listen *l,
		      struct sockfile *file, char *warn, size_t warnlen,
		      char *err, size_t errlen);

/* Relay from the listening socket fd, counted under listener id. Returns
 * 0 (fd now belongs to u), or -1/errno (fd stays the caller's). */
int udp_add_listener(struct udp_loop *u, int id, int fd);

/* Relay what is queued for listener id, then close it and its flows. */
void udp_remove_listener(struct udp_loop *u, int id);

/* Relay what every listener has queued; from then on only datagrams of
 * flows already open are relayed (a drain). */
void udp_drain(struct udp_loop *u);

/* True while some flow waits for a reply. */
bool udp_pending(struct udp_loop *u);

/* Call from the loop's timer (now: CLOCK_MONOTONIC): expire idle flows,
 * a bounded number per call. */
void udp_tick(struct udp_loop *u, int64_t now);

/* Add what the kernel dropped at the listener sockets since the last call
 * to the rcvbuf_overflow drops (the tick calls it every window). */
void udp_count_drops(struct udp_loop *u);

#endif
