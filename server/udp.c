/*
 * udp: the datagram relay path, for udp:// and unix:// listeners (an
 * AF_UNIX client is a flow like any other, keyed by the name its socket is
 * bound to). Requests from clients go to the flow's connected
 * upstream socket (runs of consecutive datagrams of one flow leave in one
 * sendmmsg); replies go back through the listener socket the request came
 * in on, so the client sees them come from the address it sent to.
 *
 * With udp_gro the kernel hands over a run of one flow's datagrams as one
 * entry (all of one size but the last); it is forwarded as one write with
 * that segment size, and counted, timed and dropped as the datagrams it
 * holds.
 *
 * Work per call is bounded (UDP_ROUNDS batches); a handler that hit the
 * bound asks the loop to call it again after the timer and the other
 * sockets had their turn, so a flood cannot starve the tick.
 */
#include "udp.h"

#include <errno.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

#define UDP_ROUNDS	8
#define EXPIRE_PER_TICK	64
/* The receive buffer of each entry with gro: a coalesced run of one
 * flow's datagrams is at most one 64 KB super-datagram. */
#define GRO_BUFSIZE	65535
/* CMSG_SPACE(struct timespec) + CMSG_SPACE(struct in6_pktinfo) +
 * CMSG_SPACE(int) for UDP_GRO (or uint16_t for UDP_SEGMENT), with room;
 * AF_UNIX: the timestamp and CMSG_SPACE(struct ucred) */
#define CTL_SIZE	128

static void batch_free(struct udp_batch *b)
{
	free(b->rx);
	free(b->tx);
	free(b->iov);
	free(b->name);
	free(b->buf);
	free(b->ctl);
	free(b->ts_ns);
	free(b->dst);
	free(b->has_dst);
	free(b->txctl);
	free(b->seg);
	free(b->txseg);
	free(b->cred);
	free(b->has_cred);
	free(b->txflow);
	free(b->undelivered);
	memset(b, 0, sizeof(*b));
}

static int batch_init(struct udp_batch *b, int cap, int bufsize)
{
	memset(b, 0, sizeof(*b));
	b->cap = cap;
	b->bufsize = bufsize;
	b->rx = calloc((size_t)cap, sizeof(*b->rx));
	b->tx = calloc((size_t)cap, sizeof(*b->tx));
	b->iov = calloc((size_t)cap, sizeof(*b->iov));
	b->name = calloc((size_t)cap, sizeof(*b->name));
	b->buf = calloc((size_t)cap, (size_t)bufsize);
	b->ctl = calloc((size_t)cap, CTL_SIZE);
	b->ts_ns = calloc((size_t)cap, sizeof(*b->ts_ns));
	b->dst = calloc((size_t)cap, sizeof(*b->dst));
	b->has_dst = calloc((size_t)cap, sizeof(*b->has_dst));
	b->txctl = calloc((size_t)cap, CTL_SIZE);
	b->seg = calloc((size_t)cap, sizeof(*b->seg));
	b->txseg = calloc((size_t)cap, sizeof(*b->txseg));
	b->cred = calloc((size_t)cap, sizeof(*b->cred));
	b->has_cred = calloc((size_t)cap, sizeof(*b->has_cred));
	b->txflow = calloc((size_t)cap, sizeof(*b->txflow));
	b->undelivered = calloc((size_t)cap, sizeof(*b->undelivered));
	if (!b->seg || !b->txseg || !b->rx || !b->tx || !b->iov || !b->name || !b->buf || !b->ctl ||
	    !b->ts_ns || !b->dst || !b->has_dst || !b->txctl || !b->cred ||
	    !b->has_cred || !b->txflow || !b->undelivered) {
		batch_free(b);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

static void set_buffers(int fd, int bytes)
{
	if (bytes <= 0)
		return;
	/* The FORCE variants pass the sysctl maximum when we may (root). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
}

/* Ask for coalesced runs (UDP_GRO, Linux 5.0). */
static int set_gro(int fd)
{
	int one = 1;
	return setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one));
}

/* What the kernel charges a sender for an AF_UNIX datagram of n bytes
 * until it is read (its truesize, as SIOCOUTQ showed on 6.18 for 16 bytes
 * to 64 KB): the struct sk_buff, and the data with struct skb_shared_info
 * in one kmalloc rounded up to a power of two; past SKB_MAX_ALLOC (16 KB
 * less that info) the rest of the data in pages. */
static long datagram_cost(long n)
{
	const long skb = 256, info = 320, head_max = 16384, page = 4096;
	if (n + info > head_max)
		return skb + head_max +
		       (n + info - head_max + page - 1) / page * page;
	long head = 512;
	while (head < n + info)
		head <<= 1;
	return skb + head;
}

/* The receive queue of an AF_UNIX datagram socket, in datagrams. */
static long unix_qlen(void)
{
	long n = 10;		/* the kernel's default */
	FILE *f = fopen("/proc/sys/net/unix/max_dgram_qlen", "re");
	if (f) {
		if (fscanf(f, "%ld", &n) != 1 || n < 1)
			n = 10;
		fclose(f);
	}
	return n;
}

/* An AF_UNIX datagram stays charged to its sender's send buffer until its
 * receiver reads it, and a receiver's queue holds max_dgram_qlen of them
 * and one more: a client that sends and never reads pins that many of the
 * listener's replies, and at the kernel's default buffer (wmem_default,
 * 208 KB: 22 replies of 4000 bytes) two such clients leave no room for
 * anyone else's. So the buffer holds UDP_UNREAD_CLIENTS queues full and a
 * batch in flight; warn says so when the kernel gives less (SO_SNDBUF is
 * capped at net.core.wmem_max without CAP_NET_ADMIN). */
static void size_unix_sndbuf(int fd, const struct addr *a,
			     const struct udp_listen *l, char *warn,
			     size_t warnlen)
{
	long cost = datagram_cost(l->max_datagram), queue = unix_qlen() + 1;
	long want = (UDP_UNREAD_CLIENTS * queue + l->batch) * cost;
	if (want > INT32_MAX / 2)
		want = INT32_MAX / 2;
	int got = 0;
	socklen_t len = sizeof(got);
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &len) < 0 || got >= want)
		return;		/* socket_buffer gave it room enough */
	int half = (int)((want + 1) / 2);	/* the kernel doubles it */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &half, sizeof(half)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &half, sizeof(half));
	char text[ADDR_TEXT_MAX];
	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &len) < 0 || got >= want)
		return;
	long room = (got - l->batch * cost) / (queue * cost);
	snprintf(warn, warnlen, "%s: a send buffer of %d bytes, room for the "
		 "replies %ld clients that do not read would pin, not %d: the "
		 "others' replies fail beyond (net.core.wmem_max = %ld, or "
		 "CAP_NET_ADMIN, gives the %ld bytes)",
		 addr_format(a, text, sizeof(text)), got, room > 0 ? room : 0,
		 UDP_UNREAD_CLIENTS, (want + 1) / 2, want);
}

int udp_open_listener(const struct addr *a, const struct udp_listen *l,
		      struct sockfile *file, char *warn, size_t warnlen,
		      char *err, size_t errlen)
{
	memset(file, 0, sizeof(*file));
	if (warnlen)
		warn[0] = 0;
	int fd = addr_listen_socket(a, SOCK_DGRAM, err, errlen);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	/* A wildcard listener must answer from the address each client used. */
	if (a->sa.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&a->sa;
		if (IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr))
			setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one,
				   sizeof(one));
	} else if (a->sa.ss_family == AF_INET &&
		   ((const struct sockaddr_in *)&a->sa)->sin_addr.s_addr ==
		   htonl(INADDR_ANY)) {
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	}
	set_buffers(fd, l->socket_buffer);
	if (a->kind == ADDR_UNIX) {
		/* Always, so that a reload may set unix_allow. */
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		size_unix_sndbuf(fd, a, l, warn, warnlen);
		const struct sockaddr_un *un = (const void *)&a->sa;
		if (un->sun_path[0])
			return sockfile_bind(fd, a, &l->perm, file, err, errlen);
	}
	/* GRO is UDP's; an AF_UNIX datagram is always one. */
	if (l->gro && a->kind == ADDR_UDP && set_gro(fd) < 0) {
		int e = errno;
		char text[ADDR_TEXT_MAX];
		snprintf(err, errlen, "%s: udp_gro: UDP_GRO refused: %s (needs "
			 "Linux 5.0 or later)", addr_format(a, text, sizeof(text)),
			 strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	return addr_bind_listener(a, fd, 0, err, errlen);
}

/* A flow's socket to the upstream: connected, so the kernel filters out
 * datagrams from anyone else and reports ICMP errors to us. */
static int open_upstream(const struct addr *a, int bufsize, bool gro)
{
	int fd = socket(a->sa.ss_family, SOCK_DGRAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
	set_buffers(fd, bufsize);
	/* The listeners took UDP_GRO at start, so this kernel has it. */
	if (gro)
		set_gro(fd);
	if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* recvmmsg up to n datagrams into b; fills b->ts_ns and b->dst. Returns
 * the count, or -1 with errno. */
static int recv_batch(int fd, struct udp_batch *b, int n)
{
	for (int i = 0; i < n; i++) {
		b->iov[i].iov_base = b->buf + (size_t)i * (size_t)b->bufsize;
		b->iov[i].iov_len = (size_t)b->bufsize;
		struct msghdr *m = &b->rx[i].msg_hdr;
		m->msg_name = &b->name[i];
		m->msg_namelen = sizeof(b->name[i]);
		m->msg_iov = &b->iov[i];
		m->msg_iovlen = 1;
		m->msg_control = b->ctl + (size_t)i * CTL_SIZE;
		m->msg_controllen = CTL_SIZE;
		m->msg_flags = 0;
	}
	int r = recvmmsg(fd, b->rx, (unsigned)n, MSG_DONTWAIT, NULL);
	for (int i = 0; i < r; i++) {
		struct msghdr *m = &b->rx[i].msg_hdr;
		b->ts_ns[i] = 0;
		b->has_dst[i] = 0;
		b->seg[i] = 0;
		b->has_cred[i] = 0;
		/* One walk for every kind: this runs per datagram. */
		for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
			int64_t ts = clock_cmsg_ns(c);
			if (ts) {
				b->ts_ns[i] = ts;
			} else if (c->cmsg_level == IPPROTO_IP &&
				   c->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				memset(&b->dst[i], 0, sizeof(b->dst[i]));
				memcpy(&b->dst[i], &pi.ipi_addr, 4);
				b->has_dst[i] = 1;
			} else if (c->cmsg_level == IPPROTO_IPV6 &&
				   c->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;
				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				b->dst[i] = pi.ipi6_addr;
				b->has_dst[i] = 1;
			} else if (c->cmsg_level == SOL_UDP &&
				   c->cmsg_type == UDP_GRO) {
				int seg;
				memcpy(&seg, CMSG_DATA(c), sizeof(seg));
				b->seg[i] = (uint16_t)seg;
			} else if (c->cmsg_level == SOL_SOCKET &&
				   c->cmsg_type == SCM_CREDENTIALS) {
				memcpy(&b->cred[i], CMSG_DATA(c),
				       sizeof(b->cred[i]));
				b->has_cred[i] = 1;
			}
		}
	}
	return r;
}

/* Datagrams in an entry of len bytes with segment size seg (0: one). */
static uint64_t datagrams(size_t len, uint16_t seg)
{
	return seg && len > seg ? (len + seg - 1) / seg : 1;
}

/* An egress device without checksum offload refuses segmented writes
 * (EIO): send such a run datagram by datagram. The segment size is the
 * last control message, so the others (the reply's source) stay. Returns
 * the datagrams sent, their bytes added to *bytes. */
static uint64_t send_split(int fd, struct msghdr *t, uint16_t seg,
			   uint64_t *bytes)
{
	struct msghdr one = *t;
	struct iovec part;
	uint64_t sent = 0;
	one.msg_controllen -= CMSG_SPACE(sizeof(uint16_t));
	if (!one.msg_controllen)
		one.msg_control = NULL;
	one.msg_iov = &part;
	for (size_t off = 0; off < t->msg_iov->iov_len; off += seg) {
		part.iov_base = (char *)t->msg_iov->iov_base + off;
		part.iov_len = t->msg_iov->iov_len - off;
		if (part.iov_len > seg)
			part.iov_len = seg;
		if (sendmsg(fd, &one, MSG_DONTWAIT) >= 0) {
			sent++;
			*bytes += part.iov_len;
		}
	}
	return sent;
}

/* Whether fd's send buffer is full: what the kernel holds against it
 * (SIOCOUTQ; for AF_UNIX the datagrams sent and not yet read) has reached
 * SO_SNDBUF. An EAGAIN then fails every entry after it as well; when it
 * is not full, the one receiver of the entry had no room (an AF_UNIX
 * client's queue is full: it does not read). */
static bool sndbuf_full(int fd)
{
	int queued, size;
	socklen_t len = sizeof(size);
	return ioctl(fd, SIOCOUTQ, &queued) < 0 ||
	       getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, &len) < 0 ||
	       queued >= size;
}

/* A reply to f could not be delivered, and not for want of room in
 * relay's own send buffer: the UDP_REPLY_FAILS'th in a row dooms it. */
static void undelivered(struct udp_batch *b, struct flow *f)
{
	if (f && f->reply_fails < UDP_REPLY_FAILS &&
	    ++f->reply_fails == UDP_REPLY_FAILS)
		b->undelivered[b->nundelivered++] = f;
}

/* sendmmsg b->tx[0..k) on fd. Whatever cannot be sent is counted as a drop
 * with reason fail (or tx_full, upstream_refused), by datagram, and charged
 * to the reply's flow (b->txflow) when that client is why. Returns bytes
 * sent and the number of datagrams in *sent. */
static uint64_t send_batch(struct udp_loop *u, int fd, struct udp_batch *b,
			   int k, enum stats_drop fail, uint64_t *sent)
{
	struct stats *s = u->stats;
	struct mmsghdr *tx = b->tx;
	uint64_t bytes = 0;
	int i = 0;
	bool retried = false;
	*sent = 0;
	while (i < k) {
		int r = sendmmsg(fd, tx + i, (unsigned)(k - i), MSG_DONTWAIT);
		if (r > 0) {
			for (int j = i; j < i + r; j++) {
				bytes += tx[j].msg_len;
				*sent += datagrams(tx[j].msg_len, b->txseg[j]);
				if (b->txflow[j])
					b->txflow[j]->reply_fails = 0;
			}
			i += r;
			continue;
		}
		int e = errno;
		uint64_t n = datagrams(tx[i].msg_hdr.msg_iov->iov_len, b->txseg[i]);
		if ((e == EAGAIN || e == ENOBUFS) && sndbuf_full(fd)) {
			for (int j = i + 1; j < k; j++)
				n += datagrams(tx[j].msg_hdr.msg_iov->iov_len,
					       b->txseg[j]);
			stats_drop(s, D_tx_full, n);
			break;
		}
		if (e == EAGAIN || e == ENOBUFS) {
			/* This receiver's queue alone: the others may go. */
			stats_drop(s, D_tx_full, n);
			undelivered(b, b->txflow[i]);
			i++;
			retried = false;
			continue;
		}
		if (e == ECONNREFUSED && !b->txflow[i]) {
			/* An earlier datagram met an ICMP port unreachable; the
			 * kernel reports it on this call. Try this entry once
			 * more; refused again, it is lost too. */
			stats_drop(s, D_upstream_refused, retried ? n : 1);
			stats_add(&s->error[E_upstream_refused], 1);
			if (!retried) {
				retried = true;
				continue;
			}
			n = 0;
		} else if (e == EIO && n > 1) {
			uint64_t ok = send_split(fd, &tx[i].msg_hdr, b->txseg[i],
						 &bytes);
			*sent += ok;
			n -= ok;
		}
		if (n) {
			stats_drop(s, fail, n);
			stats_add(&s->error[E_send], 1);
			undelivered(b, b->txflow[i]);
		}
		i++;		/* give up on this entry only */
		retried = false;
	}
	return bytes;
}

/* Append a control message to t, whose buffer is ctl (CTL_SIZE). */
static void add_cmsg(struct msghdr *t, char *ctl, int level, int type,
		     const void *data, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)(ctl + t->msg_controllen);
	memset(c, 0, CMSG_SPACE(len));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	t->msg_control = ctl;
	t->msg_controllen += CMSG_SPACE(len);
}

/* tx[k] carries rx[i] on: to the upstream, or as a reply to the client of
 * flow reply, from the address that client sent to when the listener is a
 * wildcard. A coalesced run leaves as one write with its segment size
 * (last, see send_split), so the receiver gets the datagrams it was made
 * of. */
static void carry(struct udp_batch *b, int k, int i, struct flow *reply)
{
	struct msghdr *t = &b->tx[k].msg_hdr;
	char *ctl = b->txctl + (size_t)k * CTL_SIZE;
	memset(t, 0, sizeof(*t));
	b->txflow[k] = reply;
	b->iov[i].iov_len = b->rx[i].msg_len;
	t->msg_iov = &b->iov[i];
	t->msg_iovlen = 1;
	if (reply) {
		t->msg_name = (void *)&reply->client;
		t->msg_namelen = reply->client_len;
	}
	if (reply && reply->has_local &&
	    reply->client.sa.sa_family == AF_INET) {
		struct in_pktinfo pi = { 0 };
		memcpy(&pi.ipi_spec_dst, &reply->local, 4);
		add_cmsg(t, ctl, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	} else if (reply && reply->has_local) {
		struct in6_pktinfo pi = { .ipi6_addr = reply->local };
		add_cmsg(t, ctl, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi));
	}
	b->txseg[k] = datagrams(b->rx[i].msg_len, b->seg[i]) > 1 ? b->seg[i] : 0;
	if (b->txseg[k])
		add_cmsg(t, ctl, SOL_UDP, UDP_SEGMENT, &b->txseg[k],
			 sizeof(b->txseg[k]));
}

/* Count the batch's bytes, the latency of each datagram and the wake-up.
 * Returns the datagrams in it. */
static uint64_t account_rx(struct udp_loop *u, int r, uint64_t *bytes)
{
	struct stats *s = u->stats;
	int64_t now = clock_ns(CLOCK_REALTIME);
	if (u->loop->wake_ns && r > 0 && u->b.ts_ns[0]) {
		/* The sender, when the datagram says (AF_UNIX): whether its
		 * own delays may be in the wait is asked only if it was late. */
		stats_record_wake(s, W_datagram,
				  (u->loop->wake_ns - u->b.ts_ns[0]) / 1000,
				  u->b.has_cred[0] ? u->b.cred[0].pid : 0);
		u->loop->wake_ns = 0;
	}
	uint64_t n = 0, runs = 0;
	*bytes = 0;
	for (int i = 0; i < r; i++) {
		uint64_t d = datagrams(u->b.rx[i].msg_len, u->b.seg[i]);
		n += d;
		runs += d > 1;
		*bytes += u->b.rx[i].msg_len;
		for (uint64_t j = 0; j < d && u->b.ts_ns[i]; j++)
			stats_record_rx(s, (now - u->b.ts_ns[i]) / 1000);
	}
	stats_add(&s->counter[S_batches], 1);
	stats_add(&s->counter[S_gro_runs], runs);
	return n;
}

/* Entry i is over max_datagram (or was cut to the buffer): dropped, counted
 * as the datagrams it holds. */
static bool oversize(struct udp_loop *u, int i)
{
	const struct udp_batch *b = &u->b;
	size_t len = b->seg[i] ? b->seg[i] : b->rx[i].msg_len;
	if (!(b->rx[i].msg_hdr.msg_flags & MSG_TRUNC) &&
	    len <= (size_t)u->set.max_datagram)
		return false;
	stats_drop(u->stats, D_oversize, datagrams(b->rx[i].msg_len, b->seg[i]));
	return true;
}

static void beat(struct udp_loop *u)
{
	const uint64_t *c = u->stats->counter;
	heartbeat_beat(u->hb, clock_ns(CLOCK_MONOTONIC),
		       __atomic_load_n(&c[S_ticks], __ATOMIC_RELAXED),
		       __atomic_load_n(&c[S_rx_packets], __ATOMIC_RELAXED) +
		       __atomic_load_n(&c[S_reply_packets], __ATOMIC_RELAXED));
}

/* Close f (its upstream socket too) and count why. */
static void close_flow(struct udp_loop *u, struct flow *f,
		       enum stats_counter why)
{
	if (f->fd >= 0) {
		loop_del(u->loop, f->fd, &f->handler);
		close(f->fd);
	}
	stats_flows(u->stats, f->key.listener, -1);
	flow_remove(&u->flows, f);
	stats_add(&u->stats->counter[why], 1);
	stats_set(&u->stats->flows_active, u->flows.active);
}

/* Close the flows whose replies kept failing (undelivered()): once their
 * batch is sent, as an entry may point at a flow's client address. */
static void close_undelivered(struct udp_loop *u)
{
	struct udp_batch *b = &u->b;
	for (int i = 0; i < b->nundelivered; i++) {
		struct flow *f = b->undelivered[i];
		/* closed since, and its slot perhaps taken by a new flow */
		if (f->used && f->reply_fails >= UDP_REPLY_FAILS)
			close_flow(u, f, S_flows_undelivered);
	}
	b->nundelivered = 0;
}

static loop_fn on_upstream;

/* A flow for a new client's n datagrams: make room if the table is full
 * (flow_victim), then open its upstream socket unless the upstream is echo.
 * NULL: the datagrams are dropped, and counted here. */
static struct flow *new_flow(struct udp_loop *u, const struct flow_key *k,
			     const struct sockaddr *client, socklen_t len,
			     int64_t now, uint64_t n)
{
	struct stats *s = u->stats;
	if (flow_full(&u->flows)) {
		/* A client waiting for its answer keeps its flow (and its
		 * upstream port); the newcomer is refused instead. */
		struct flow *v = flow_victim(&u->flows, now, u->wait_ns);
		if (!v) {
			stats_drop(s, D_flows_busy, n);
			return NULL;
		}
		close_flow(u, v, S_flows_evicted);
	}
	struct flow *f = flow_insert(&u->flows, k, client, len, now);
	if (u->upstream.kind != ADDR_ECHO) {
		f->fd = open_upstream(&u->upstream, u->set.socket_buffer,
				      u->set.gro);
		f->handler.fn = on_upstream;
		if (f->fd < 0 || loop_add(u->loop, f->fd, &f->handler) < 0) {
			stats_add(&s->error[E_socket], 1);
			if (f->fd >= 0)
				close(f->fd);
			flow_remove(&u->flows, f);
			stats_drop(s, D_no_flow_socket, n);
			return NULL;
		}
	}
	f->upstream = (uint8_t)u->upstream_slot;
	f->upstream_id = u->upstream_id;
	stats_count(s, S_flows_created, 1);
	stats_flows(s, k->listener, 1);
	stats_set(&s->flows_active, u->flows.active);
	return f;
}

/* Send the run tx[0..k) to fd: to the upstream, or back to clients (echo). */
static void flush(struct udp_loop *u, int fd, bool echo, int k)
{
	if (!k)
		return;
	uint64_t sent;
	uint64_t bytes = send_batch(u, fd, &u->b, k,
				    echo ? D_reply_failed : D_upstream_error, &sent);
	stats_count(u->stats, S_tx_packets, sent);
	stats_count(u->stats, S_tx_bytes, bytes);
	if (echo) {
		stats_count(u->stats, S_reply_tx_packets, sent);
		stats_count(u->stats, S_reply_tx_bytes, bytes);
	}
}

static void relay_requests(struct udp_loop *u, struct udp_listener *ls, int r)
{
	struct stats *s = u->stats;
	struct udp_batch *b = &u->b;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	int run_fd = -1, k = 0;
	bool run_echo = false;
	for (int i = 0; i < r; i++) {
		struct msghdr *m = &b->rx[i].msg_hdr;
		uint64_t n = datagrams(b->rx[i].msg_len, b->seg[i]);
		if (oversize(u, i))
			continue;
		/* An AF_UNIX client that never bound its socket has no
		 * name to answer to. */
		if (m->msg_namelen <= offsetof(struct sockaddr_un, sun_path)) {
			stats_drop(s, D_unnamed, n);
			continue;
		}
		if (u->allow.n && b->name[i].ss_family == AF_UNIX &&
		    !(b->has_cred[i] && peer_allowed(&u->allow, b->cred[i].uid,
						     b->cred[i].gid))) {
			stats_drop(s, D_not_allowed, n);
			continue;
		}
		struct flow_key key;
		flow_key_make(&key, m->msg_name, m->msg_namelen, ls->slot);
		struct flow *f = flow_lookup(&u->flows, &key);
		/* A client that keeps retrying never lets its flow expire: move
		 * it from an upstream that refused it, or that a reload
		 * replaced, to the one configured now (a new socket, so nothing
		 * the old upstream still sends can reach the client). */
		bool stale = f && !u->draining &&
			     (f->refused || f->upstream_id != u->upstream_id);
		if (!f || stale) {
			if (u->draining) {
				stats_drop(s, D_draining, n);
				continue;
			}
			/* Closing or creating a flow may close the socket of
			 * the run (an eviction). */
			flush(u, run_fd, run_echo, k);
			k = 0;
			run_fd = -1;
			if (stale)
				close_flow(u, f, S_flows_moved);
			f = new_flow(u, &key, m->msg_name, m->msg_namelen, now,
				     n);
			if (!f)
				continue;
			f->local = b->dst[i];
			f->has_local = b->has_dst[i];
		}
		bool echo = f->fd < 0;
		int fd = echo ? ls->fd : f->fd;
		if (fd != run_fd) {
			flush(u, run_fd, run_echo, k);
			k = 0;
			run_fd = fd;
			s->cur_upstream = f->upstream;
			run_echo = echo;
		}
		carry(b, k++, i, echo ? f : NULL);
		flow_sent(&u->flows, f, echo ? 0 : (uint32_t)n, now);
	}
	flush(u, run_fd, run_echo, k);
	close_undelivered(u);
}

static bool on_client(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct udp_listener *ls = container_of(h, struct udp_listener, h);
	struct udp_loop *u = ls->u;
	struct stats *s = u->stats;
	(void)l;
	(void)events;
	if (ls->fd < 0)		/* removed by a reload in this same round */
		return false;
	s->cur_listener = ls->slot;
	for (int round = 0; round < UDP_ROUNDS; round++) {
		int r = recv_batch(ls->fd, &u->b, u->set.batch);
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				stats_add(&s->error[E_recv], 1);
			return false;
		}
		uint64_t bytes, n = account_rx(u, r, &bytes);
		stats_count(s, S_rx_packets, n);
		stats_count(s, S_rx_bytes, bytes);
		relay_requests(u, ls, r);
		beat(u);
		if (r < u->set.batch)
			return false;
	}
	return true;
}

static bool on_upstream(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct flow *f = container_of(h, struct flow, handler);
	struct udp_loop *u = container_of(f->table, struct udp_loop, flows);
	struct stats *s = u->stats;
	struct udp_batch *b = &u->b;
	(void)l;
	(void)events;
	/* An event fetched in the same epoll_wait as the datagram whose new
	 * flow evicted this one: the slot is closed (or already reused). */
	if (!f->used || f->fd < 0)
		return false;
	s->cur_listener = f->key.listener;
	s->cur_upstream = f->upstream;
	for (int round = 0; round < UDP_ROUNDS; round++) {
		int r = recv_batch(f->fd, b, u->set.batch);
		if (r < 0) {
			if (errno == ECONNREFUSED) {
				/* ICMP port unreachable for what we sent. */
				stats_add(&s->error[E_upstream_refused], 1);
				stats_drop(s, D_upstream_refused, 1);
				f->refused = 1;
				flow_answered(&u->flows, f, f->pending,
					      clock_ns(CLOCK_MONOTONIC));
				continue;
			}
			if (errno != EAGAIN && errno != EINTR)
				stats_add(&s->error[E_recv], 1);
			return false;
		}
		uint64_t bytes, n = account_rx(u, r, &bytes);
		stats_count(s, S_reply_packets, n);
		stats_count(s, S_reply_bytes, bytes);
		int k = 0;
		for (int i = 0; i < r; i++)
			if (!oversize(u, i))
				carry(b, k++, i, f);
		flow_answered(&u->flows, f, (uint32_t)n,
			      clock_ns(CLOCK_MONOTONIC));
		uint64_t sent;
		bytes = send_batch(u, u->ls[f->key.listener].fd, b, k,
				   D_reply_failed, &sent);
		stats_count(s, S_reply_tx_packets, sent);
		stats_count(s, S_reply_tx_bytes, bytes);
		beat(u);
		close_undelivered(u);
		if (!f->used || r < u->set.batch)
			return false;
	}
	return true;
}

void udp_count_drops(struct udp_loop *u)
{
	for (int i = 0; i < UDP_MAX_LISTEN; i++) {
		struct udp_listener *ls = &u->ls[i];
		uint32_t mem[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mem);
		if (ls->fd < 0 || getsockopt(ls->fd, SOL_SOCKET, SO_MEMINFO, mem,
					     &len) < 0 ||
		    len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
			continue;
		u->stats->cur_listener = i;
		stats_drop(u->stats, D_rcvbuf_overflow,
			   mem[SK_MEMINFO_DROPS] - ls->drops);
		ls->drops = mem[SK_MEMINFO_DROPS];
	}
}

/* Relay what is queued on listener slot now (bounded: a flood that outruns
 * the loop must not keep it here). */
static void drain_listener(struct udp_loop *u, int slot)
{
	for (int i = 0; i < 1000; i++)
		if (!on_client(u->loop, &u->ls[slot].h, EPOLLIN))
			return;
}

int udp_loop_init(struct udp_loop *u, struct loop *l, struct stats *s,
		  struct heartbeat_loop *hb, const struct udp_settings *set)
{
	memset(u, 0, sizeof(*u));
	u->loop = l;
	u->stats = s;
	u->hb = hb;
	u->set = *set;
	for (int i = 0; i < UDP_MAX_LISTEN; i++)
		u->ls[i].fd = -1;
	if (flow_table_init(&u->flows, set->max_flows) < 0 ||
	    batch_init(&u->b, set->batch,
		       set->gro ? GRO_BUFSIZE : set->max_datagram) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void udp_loop_free(struct udp_loop *u)
{
	for (struct flow *f; u->flows.flows && (f = flow_oldest(&u->flows));)
		close_flow(u, f, S_flows_closed);
	for (int i = 0; i < UDP_MAX_LISTEN; i++)
		if (u->ls[i].fd >= 0) {
			close(u->ls[i].fd);
			u->ls[i].fd = -1;
		}
	flow_table_free(&u->flows);
	batch_free(&u->b);
}

void udp_loop_configure(struct udp_loop *u, const struct addr *upstream,
			int upstream_id, int idle_ms, int wait_ms,
			const struct peer_list *allow)
{
	u->allow = *allow;
	u->upstream = *upstream;
	u->upstream_id = upstream_id;
	u->upstream_slot = upstream_id % STATS_MAX_UPSTREAM;
	struct stats_part *p = &u->stats->upstream[u->upstream_slot];
	if (p->id != upstream_id)
		stats_part_reset(p, upstream_id);
	u->idle_ns = (int64_t)idle_ms * 1000000;
	u->wait_ns = (int64_t)wait_ms * 1000000;
}

int udp_add_listener(struct udp_loop *u, int id, int fd)
{
	for (int i = 0; i < UDP_MAX_LISTEN; i++) {
		struct udp_listener *ls = &u->ls[i];
		if (ls->fd >= 0)
			continue;
		ls->fd = fd;
		ls->id = id;
		ls->slot = i;
		ls->u = u;
		ls->drops = 0;
		stats_part_reset(&u->stats->listener[i], id);
		ls->h.fn = on_client;
		if (loop_add(u->loop, fd, &ls->h) < 0) {
			ls->fd = -1;
			return -1;
		}
		/* Edge-triggered: what arrived before we watched it gets no
		 * event of its own. */
		loop_again(u->loop, &ls->h);
		return 0;
	}
	errno = ENOSPC;
	return -1;
}

void udp_remove_listener(struct udp_loop *u, int id)
{
	for (int i = 0; i < UDP_MAX_LISTEN; i++) {
		struct udp_listener *ls = &u->ls[i];
		if (ls->fd < 0 || ls->id != id)
			continue;
		/* What the kernel already queued for it is relayed first. */
		drain_listener(u, i);
		struct flow *f = flow_oldest(&u->flows), *next;
		for (; f; f = next) {
			next = flow_younger(f);
			if (f->key.listener == i)
				close_flow(u, f, S_flows_closed);
		}
		loop_del(u->loop, ls->fd, &ls->h);
		close(ls->fd);
		ls->fd = -1;
	}
}

void udp_drain(struct udp_loop *u)
{
	for (int i = 0; i < UDP_MAX_LISTEN; i++)
		if (u->ls[i].fd >= 0)
			drain_listener(u, i);
	u->draining = true;
}

bool udp_pending(struct udp_loop *u)
{
	for (struct flow *f = flow_oldest(&u->flows); f;
	     f = flow_younger(f))
		if (f->pending)
			return true;
	return false;
}

void udp_tick(struct udp_loop *u, int64_t now)
{
	struct flow *f;
	for (int i = 0; i < EXPIRE_PER_TICK && (f = flow_oldest(&u->flows)) &&
	     now - f->last_ns >= u->idle_ns; i++)
		close_flow(u, f, S_flows_expired);
}
