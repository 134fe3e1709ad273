/*
 * libFuzzer target for the stream relay's byte path (server/tcp.c: pump,
 * conn_run, interest, the closes) over a fake transport: both ends of a
 * connection are struct socks whose operation table is this file's, and
 * the epoll set is emulated here too, edge-triggered as the kernel's. The
 * input is what the two peers do and when: send bytes, a FIN or a reset,
 * read (make room in their receive windows), and when the loop runs, so
 * every short read and write, every EAGAIN and every interleaving of
 * events with arrivals is reachable, deterministically. The transport may
 * also block as TLS does: a read that must first write (a record of its
 * own, the peer's window shut) and a write that must first read (a
 * record the peer sends), so the other direction's event is the one to
 * wait for.
 *
 * The connection's machinery is static, a narrow API by design; the
 * target includes tcp.c and stands in for accept and connect (both sides
 * start connected) and for the loop (loop_* below).
 *
 * The oracle, checked as it goes and once both peers then read all and
 * the loop ran until nothing was left to do:
 *  - each peer receives exactly the other's bytes, in order, and the FIN
 *    only after the last of them; nothing is written after the FIN, no
 *    operation touches a closed socket, a write after SOCK_AGAIN offers
 *    the same bytes again (sock.h);
 *  - nothing is left waiting: every byte that arrived is delivered, every
 *    FIN passed on, and a connection both peers finished is closed as
 *    done; one a peer reset is closed as that peer's reset, passed on to
 *    the other as a reset;
 *  - the counters say what moved, and the loop's connection count and the
 *    listener's active count return to zero.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

/* The emulated loop, in place of loop.c's: loop.h, included by tcp.c,
 * then declares these. */
#define loop_add_events	fake_loop_add_events
#define loop_mod	fake_loop_mod
#define loop_del	fake_loop_del
#define loop_again	fake_loop_again
#include "../../server/tcp.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FAKE_FD		4000	/* + side: never a real descriptor's use */
#define MAX_BUFFER	2048
#define MAX_STREAM	(64 << 10)	/* bytes a peer sends at most */
#define ENDLESS		(1u << 30)

enum { CLIENT, UPSTREAM };

/* One peer of the relay and the socket the relay holds to it. */
struct peer {
	/* what the peer did */
	uint64_t sent;		/* bytes sent (its stream: pattern()) */
	uint64_t arrived;	/* of them, in the relay's socket */
	uint64_t read;		/* of them, read by the relay */
	bool fin, rst;		/* sent after all its bytes */
	uint32_t room;		/* bytes the relay may write to it now */
	bool eintr_read, eintr_write;	/* the next one is interrupted */
	bool tls_out;		/* the next read must write first (TLS) */
	bool tls_in;		/* the next write must read first (TLS) */
	bool record;		/* a record of the TLS layer's own arrived */
	/* what the relay did to it */
	uint64_t got;		/* bytes received from the relay */
	bool shut, closed, aborted;
	uint32_t retry;		/* a write returned SOCK_AGAIN for this many */
	uint8_t retry_first;	/* ... starting with this byte */
	bool eof_seen;		/* a read returned SOCK_EOF */
	/* the emulated epoll registration */
	struct loop_handler *h;
	uint32_t interest;
	bool registered, pending, again;
};

static struct peer peers[2];
static struct loop loop;
static struct tcp_loop tl;

/* Byte i of a peer's stream: the two differ, and a shifted or repeated
 * run shows. */
static uint8_t pattern(int side, uint64_t i)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t)side << 40;
	return (uint8_t)(x >> 56 ^ x >> 13);
}

static struct peer *peer_of(const struct sock *s)
{
	if (s->fd != FAKE_FD + CLIENT && s->fd != FAKE_FD + UPSTREAM)
		abort();	/* an operation on a closed socket */
	struct peer *p = &peers[s->fd - FAKE_FD];
	if (p->closed)
		abort();
	return p;
}

/* What epoll would report for p now (a reset: all of it). */
static uint32_t readiness(const struct peer *p)
{
	uint32_t ev = p->room ? EPOLLOUT : 0;
	if (p->arrived > p->read || p->fin || p->record)
		ev |= EPOLLIN;
	if (p->fin)
		ev |= EPOLLRDHUP;
	if (p->rst)
		ev |= EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP;
	return ev;
}

/* Edge-triggered: a change in ev raises an event if it is watched. */
static void edge(struct peer *p, uint32_t ev)
{
	if (p->registered && (ev & (p->interest | EPOLLERR | EPOLLHUP)))
		p->pending = true;
}

/* ---- the loop ---- */

static struct peer *peer_fd(int fd)
{
	if (fd != FAKE_FD + CLIENT && fd != FAKE_FD + UPSTREAM)
		abort();
	return &peers[fd - FAKE_FD];
}

int fake_loop_add_events(struct loop *l, int fd, struct loop_handler *h,
			 uint32_t events)
{
	struct peer *p = peer_fd(fd);
	(void)l;
	if (p->registered)
		abort();
	p->h = h;
	p->registered = true;
	p->interest = events;
	edge(p, readiness(p));
	return 0;
}

/* epoll_ctl(MOD) reports a readiness that already holds. */
int fake_loop_mod(struct loop *l, int fd, struct loop_handler *h,
		  uint32_t events)
{
	struct peer *p = peer_fd(fd);
	(void)l;
	if (!p->registered || p->h != h)
		abort();
	p->interest = events;
	edge(p, readiness(p));
	return 0;
}

void fake_loop_del(struct loop *l, int fd, struct loop_handler *h)
{
	struct peer *p = peer_fd(fd);
	(void)l;
	if (!p->registered || p->h != h)
		abort();
	p->registered = p->pending = p->again = false;
}

void fake_loop_again(struct loop *l, struct loop_handler *h)
{
	(void)l;
	for (int i = 0; i < 2; i++)
		if (peers[i].registered && peers[i].h == h)
			peers[i].again = true;
}

/* One round of loop_run_once: the events, then what asked to run again.
 * Returns false when there was nothing to do. */
static bool run_once(void)
{
	bool any = false;
	bool again[2];
	for (int i = 0; i < 2; i++) {
		struct peer *p = &peers[i];
		if (!p->pending || !p->registered)
			continue;
		p->pending = false;
		uint32_t ev = readiness(p) & (p->interest | EPOLLERR | EPOLLHUP);
		if (ev && p->h->fn(&loop, p->h, ev))
			fake_loop_again(&loop, p->h);
		any = true;
	}
	for (int i = 0; i < 2; i++) {
		again[i] = peers[i].again;
		peers[i].again = false;
	}
	for (int i = 0; i < 2; i++) {
		struct peer *p = &peers[i];
		if (!again[i] || !p->registered)
			continue;
		if (p->h->fn(&loop, p->h, EPOLLIN))
			fake_loop_again(&loop, p->h);
		any = true;
	}
	return any;
}

/* ---- the transport ---- */

static enum sock_rc fake_handshake(struct sock *s)
{
	peer_of(s);
	s->want = 0;
	return SOCK_OK;
}

/* An interrupted call (EINTR: again at once), or one on a connection the
 * peer reset. SOCK_OK: neither. */
static enum sock_rc interrupted(struct sock *s, struct peer *p, bool *eintr)
{
	s->want = 0;
	if (*eintr) {
		*eintr = false;
		return SOCK_AGAIN;
	}
	if (p->rst) {
		s->fail = SOCK_FAIL_reset;
		return SOCK_ERROR;
	}
	return SOCK_OK;
}

/* As plain_read: a short read emptied the socket, unless the FIN is
 * known to be queued (rdhup). */
static enum sock_rc fake_read(struct sock *s, void *buf, size_t len, size_t *n)
{
	struct peer *p = peer_of(s);
	int side = (int)(p - peers);
	if (!len)
		abort();
	enum sock_rc rc = interrupted(s, p, &p->eintr_read);
	if (rc != SOCK_OK)
		return rc;
	if (p->tls_out && !p->room) {
		s->want = EPOLLOUT;
		return SOCK_AGAIN;
	}
	p->tls_out = false;	/* written: the read goes on */
	if (p->record)		/* the layer's own, no bytes for us; a
				 * write that waited for it may go on */
		p->record = p->tls_in = false;
	uint64_t have = p->arrived - p->read;
	if (have) {
		*n = have < len ? (size_t)have : len;
		for (size_t i = 0; i < *n; i++)
			((uint8_t *)buf)[i] = pattern(side, p->read + i);
		p->read += *n;
		s->want = *n < len && !s->rdhup ? EPOLLIN : 0;
		return SOCK_OK;
	}
	if (p->fin) {
		p->eof_seen = true;
		s->want = 0;
		return SOCK_EOF;
	}
	s->want = EPOLLIN;
	return SOCK_AGAIN;
}

static enum sock_rc fake_write(struct sock *s, const void *buf, size_t len,
			       size_t *n)
{
	struct peer *p = peer_of(s);
	const uint8_t *b = buf;
	int from = p == &peers[CLIENT] ? UPSTREAM : CLIENT;
	if (!len || p->shut)
		abort();	/* an empty write, or one after our FIN */
	if (p->retry && (len != p->retry || b[0] != p->retry_first))
		abort();	/* not the bytes offered before (sock.h) */
	enum sock_rc rc = interrupted(s, p, &p->eintr_write);
	if (rc != SOCK_OK)
		return rc;
	if (p->tls_in && p->record)
		p->tls_in = p->record = false;	/* read: the write goes on */
	if (!p->room || p->tls_in) {
		p->retry = (uint32_t)len;
		p->retry_first = b[0];
		s->want = p->tls_in ? EPOLLIN : EPOLLOUT;
		return SOCK_AGAIN;
	}
	*n = len < p->room ? len : p->room;
	for (size_t i = 0; i < *n; i++)
		if (b[i] != pattern(from, p->got + i))
			abort();	/* a byte lost, repeated or reordered */
	p->got += *n;
	p->room -= (uint32_t)*n;
	p->retry = 0;
	s->want = *n < len ? EPOLLOUT : 0;
	return SOCK_OK;
}

static enum sock_rc fake_shutdown(struct sock *s)
{
	struct peer *p = peer_of(s);
	int from = p == &peers[CLIENT] ? UPSTREAM : CLIENT;
	/* The FIN goes after every byte, and only once the other peer's
	 * stream ended. */
	if (p->shut || p->got != peers[from].sent || !peers[from].fin ||
	    !peers[from].eof_seen)
		abort();
	s->want = 0;
	if (p->rst) {
		s->fail = SOCK_FAIL_reset;
		return SOCK_ERROR;
	}
	p->shut = true;
	return SOCK_OK;
}

static void fake_close(struct sock *s, bool abort_)
{
	struct peer *p = peer_of(s);
	if (p->registered)
		abort();	/* closed while epoll still watches it */
	p->closed = true;
	p->aborted = abort_;
	s->fd = -1;
}

static const struct sock_ops fake_ops = {
	.name = "fake",
	.handshake = fake_handshake,
	.read = fake_read,
	.write = fake_write,
	.shutdown = fake_shutdown,
	.close = fake_close,
};

/* ---- the peers ---- */

static void peer_send(int side, uint32_t n)
{
	struct peer *p = &peers[side];
	if (p->fin || p->rst || !n || p->sent + n > MAX_STREAM)
		return;
	p->sent += n;
	p->arrived += n;
	edge(p, EPOLLIN);
}

static void peer_fin(int side)
{
	struct peer *p = &peers[side];
	if (p->fin || p->rst)
		return;
	p->fin = true;
	edge(p, EPOLLIN | EPOLLRDHUP);
}

/* The peer's TLS layer sends a record of its own (no bytes for the
 * relay to pass on). */
static void peer_record(int side)
{
	struct peer *p = &peers[side];
	if (p->rst || p->record)
		return;
	p->record = true;
	edge(p, EPOLLIN);
}

static void peer_reset(int side)
{
	struct peer *p = &peers[side];
	if (p->rst || p->closed)
		return;
	p->rst = true;
	edge(p, readiness(p));
}

static void peer_reads(int side, uint32_t n)
{
	struct peer *p = &peers[side];
	if (!n)
		return;
	p->room = p->room + n > ENDLESS ? ENDLESS : p->room + n;
	edge(p, EPOLLOUT);
}

/* ---- one connection ---- */

static void record_latency(void *arg, enum tcp_latency what, int64_t us)
{
	(void)arg;
	(void)what;
	if (us < 0)
		abort();
}

static struct tcp_conn *open_conn(int buffer, bool first_byte)
{
	struct tcp_settings set = {
		.buffer = buffer, .max_conns = 8,
		.handshake_ms = 1000000, .connect_ms = 1000000,
		.idle_ms = 1000000, .first_byte_ms = first_byte ? 1000000 : 0,
	};
	static const uint8_t source[16] = { [10] = 0xff, [11] = 0xff, 127, 0, 0, 1 };
	memset(peers, 0, sizeof(peers));
	tcp_loop_init(&tl, &loop, &set, record_latency, NULL);
	struct tcp_conn *c = conn_alloc(&tl, 0);
	if (!c)
		abort();
	c->cl.s.ops = c->up.s.ops = &fake_ops;
	c->cl.s.fd = FAKE_FD + CLIENT;
	c->up.s.fd = FAKE_FD + UPSTREAM;
	conn_admit(c, source);
	/* Accepted and connected, as conn_new and start_connect leave it. */
	if (loop_add_events(&loop, c->cl.s.fd, &c->cl.h, 0) < 0 ||
	    loop_add_events(&loop, c->up.s.fd, &c->up.h, 0) < 0)
		abort();
	c->cl.ready = c->up.ready = true;
	start_relaying(c);
	if (conn_run(c))
		loop_again(&loop, &c->cl.h);
	return c;
}

/* The connection's end, as the oracle expects it from what the peers did. */
static void check_end(struct tcp_conn *c)
{
	const struct peer *cl = &peers[CLIENT], *up = &peers[UPSTREAM];
	const uint64_t *closed = tl.stats.closed[0];
	uint64_t nclosed = 0;
	for (int k = 0; k < TCP_NCLOSES; k++)
		nclosed += closed[k];
	if (nclosed > 1 || tl.nconns != 1 - (int)nclosed ||
	    tl.stats.active[0] != 1 - (int64_t)nclosed)
		abort();
	/* What moved is what was counted. */
	if (tl.stats.l[0][TCP_L_rx_bytes] != cl->read ||
	    tl.stats.u[TCP_U_tx_bytes] != up->got ||
	    tl.stats.u[TCP_U_rx_bytes] != up->read ||
	    tl.stats.l[0][TCP_L_tx_bytes] != cl->got)
		abort();
	if (cl->rst || up->rst) {
		/* Reset: closed, passed on as a reset, unless both had
		 * finished cleanly first. */
		if (closed[TCP_CLOSE_done])
			return;
		bool by_cl = closed[TCP_CLOSE_client_reset] && cl->rst;
		bool by_up = closed[TCP_CLOSE_upstream_reset] && up->rst;
		if (!(by_cl || by_up) || !cl->closed || !up->closed ||
		    !cl->aborted || !up->aborted)
			abort();
		return;
	}
	/* Nothing waits: every byte delivered, every FIN passed on. */
	if (cl->read != cl->arrived || up->got != cl->sent ||
	    up->read != up->arrived || cl->got != up->sent ||
	    up->shut != cl->fin || cl->shut != up->fin)
		abort();
	bool done = cl->fin && up->fin;
	if (done != (closed[TCP_CLOSE_done] == 1) || done != !!nclosed ||
	    (done && (!cl->closed || !up->closed || cl->aborted || up->aborted)))
		abort();
	if (!done && (c->dead || cl->closed || up->closed))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	int buffer = 1 + (data[0] | (data[1] & 7) << 8) % MAX_BUFFER;
	struct tcp_conn *c = open_conn(buffer, data[1] & 8);
	peers[CLIENT].room = (uint32_t)(data[2] & 0xf) << (data[1] >> 4 & 7);
	peers[UPSTREAM].room = (uint32_t)(data[2] >> 4) << (data[1] >> 4 & 7);
	for (size_t i = 3; i < size; i++) {
		uint8_t op = data[i], arg = i + 1 < size ? data[i + 1] : 0;
		int side = op & 1;
		switch (op >> 1 & 7) {
		case 0:		/* a peer sends arg+1 bytes, or a multiple */
			peer_send(side, (uint32_t)(arg + 1) << (op >> 4 & 7));
			i++;
			break;
		case 1:		/* a peer reads (opens its window) */
			peer_reads(side, (uint32_t)(arg + 1) << (op >> 4 & 7));
			i++;
			break;
		case 2:
			peer_fin(side);
			break;
		case 3:
			if (op & 0x80)	/* rarer than the rest */
				peer_reset(side);
			else
				peer_record(side);
			break;
		case 4:		/* the next read or write is interrupted, or
				 * blocks the way TLS may */
			if (op & 0x20)
				*(op & 0x10 ? &peers[side].tls_in :
				  &peers[side].tls_out) = true;
			else
				*(op & 0x10 ? &peers[side].eintr_write :
				  &peers[side].eintr_read) = true;
			break;
		case 5:
		case 6:		/* the loop runs a round or a few */
			for (int k = 0; k <= (op >> 4); k++)
				run_once();
			break;
		case 7:		/* the loop's tick (frees closed connections) */
			tcp_tick(&tl);
			break;
		}
	}
	/* Both peers now read all there is, and send the records their TLS
	 * layers owe; the loop runs until quiet. */
	for (int side = CLIENT; side <= UPSTREAM; side++) {
		peer_reads(side, ENDLESS);
		if (peers[side].tls_in)
			peer_record(side);
	}
	/* Each round moves up to ROUNDS buffers each way while bytes wait:
	 * more rounds than that allows is a connection busy forever. */
	uint64_t rounds = 0, bound = 64 + 2 * (peers[CLIENT].sent +
						peers[UPSTREAM].sent) / (uint64_t)buffer;
	while (run_once())
		if (++rounds > bound)
			abort();
	check_end(c);
	tcp_loop_free(&tl);
	return 0;
}
