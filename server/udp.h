/*
 * udp: the datagram path of a loop thread. Sockets are non-blocking and
 * read and written in batches (recvmmsg/sendmmsg) into buffers allocated
 * once per loop; each datagram carries its kernel receive time
 * (SO_TIMESTAMPNS). What the kernel dropped at a listener socket (receive
 * buffer full) is read from the socket's counter (SO_MEMINFO), which,
 * unlike SO_RXQ_OVFL, does not wait for the next datagram to tell.
 */
#ifndef RELAY_UDP_H
#define RELAY_UDP_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "addr.h"
#include "loop.h"

struct worker;

/* The receive buffer of each entry with udp_gro: a coalesced run of one
 * flow's datagrams is at most one 64 KB super-datagram. */
#define UDP_GRO_BUFSIZE	65535

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
};

int udp_batch_init(struct udp_batch *b, int cap, int bufsize);
void udp_batch_free(struct udp_batch *b);

/* A listener socket: bound to a, SO_REUSEPORT (one per loop), timestamps
 * on; bound to a wildcard address it also learns each datagram's
 * destination (IP_PKTINFO), so replies leave from the address the client
 * sent to. With gro, a run of datagrams of one flow arrives as one entry
 * (UDP_GRO) and leaves as one segmented write (UDP_SEGMENT): the receiver
 * still sees each datagram, the relay pays per run. Returns the fd, or -1
 * with err filled (the address and why, e.g. "address already in use"). */
int udp_open_listener(const struct addr *a, int bufsize, bool gro, char *err,
		      size_t errlen);

/* The handler of a listener socket (struct lsock) and of a flow's upstream
 * socket (struct flow): read a bounded number of batches and relay them. */
bool udp_on_client(struct loop *l, struct loop_handler *h, uint32_t events);
bool udp_on_upstream(struct loop *l, struct loop_handler *h, uint32_t events);

/* Add what the kernel dropped at the listener sockets since the last call
 * to the rcvbuf_overflow drops (the tick calls it every window). */
void udp_count_drops(struct worker *w);

/* Read and relay everything queued on a listener socket now (drain). */
void udp_drain_listener(struct worker *w, int slot);

#endif
