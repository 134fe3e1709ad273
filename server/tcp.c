/*
 * tcp: connections. Each side of a connection knows what its blocked read
 * (or handshake) and its blocked write (or connect) wait for; an event
 * clears what it satisfies and the connection then does all it can: the
 * handshakes, the connect, then both directions, each a bounded number of
 * rounds of "write what is buffered, read what fits". What it could not do
 * becomes the interest set, changed with epoll_ctl only when it differs.
 *
 * A closed connection stays allocated for two ticks: events for its other
 * socket may already sit in the batch the loop is working through.
 */
#include "tcp.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "stats.h"
#include "tls.h"

#define ROUNDS		8	/* write+read rounds per direction per call */
#define ACCEPTS		32	/* accepts per call */
#define EXPIRE_PER_TICK	64
#define BACKOFF_NS	100000000LL	/* out of descriptors: accept again after */
#define BACKLOG		4096

struct tcp_side {
	struct loop_handler h;
	struct tcp_conn *c;
	struct sock s;
	uint32_t events;	/* what epoll watches now */
	uint32_t rd_wait;	/* the blocked read or handshake waits for these */
	uint32_t wr_wait;	/* the blocked write or connect waits for these */
	bool ready;		/* connected, handshake done */
	bool connecting;	/* upstream: connect() in progress */
	bool eof;		/* its stream ended */
	bool shut;		/* ours to it ended */
	uint32_t head, tail;	/* buf[head..tail): read from it, for the other */
	uint32_t retry;		/* a blocked write must offer this many again */
	int64_t in_ns;		/* receive time of the burst not yet written */
	char *buf;
};

enum { L_NONE, L_HANDSHAKE, L_CONNECT, L_RELAY, L_UNHEARD };

struct tcp_conn {
	struct tcp_side cl, up;
	struct tcp_loop *t;
	int slot;		/* listener */
	uint32_t cap;		/* bytes per buffer */
	int list;
	int64_t since_ns;	/* phase start or last activity, coarse clock */
	int64_t born_ns;	/* accepted, coarse clock */
	struct list_link link;	/* on its phase's list */
	struct tcp_conn *dnext;	/* the dying and dead chains */
	struct tcp_conn *snext;	/* chain of its source's bucket */
	uint8_t source[16];	/* see source_key */
	bool sourced;		/* on that chain */
	bool heard;		/* the client sent a byte (or its FIN) */
	bool dead;
};

#define NAMES(name, help) #name,
#define HELPS(name, help) help,
static const char *const close_names[] = { TCP_CLOSES(NAMES) };
static const char *const close_helps[] = { TCP_CLOSES(HELPS) };
static const char *const lc_names[] = { TCP_LCOUNTERS(NAMES) };
static const char *const lc_helps[] = { TCP_LCOUNTERS(HELPS) };
static const char *const uc_names[] = { TCP_UCOUNTERS(NAMES) };
static const char *const uc_helps[] = { TCP_UCOUNTERS(HELPS) };
#undef NAMES
#undef HELPS

const char *tcp_close_name(enum tcp_close c) { return close_names[c]; }
const char *tcp_close_help(enum tcp_close c) { return close_helps[c]; }
const char *tcp_lcounter_name(enum tcp_lcounter c) { return lc_names[c]; }
const char *tcp_lcounter_help(enum tcp_lcounter c) { return lc_helps[c]; }
const char *tcp_ucounter_name(enum tcp_ucounter c) { return uc_names[c]; }
const char *tcp_ucounter_help(enum tcp_ucounter c) { return uc_helps[c]; }

/* Deadlines are coarse (milliseconds at best); the coarse clock is cheap
 * enough to read on every burst. */
static int64_t coarse_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC_COARSE);
}

static struct list *phase_list(struct tcp_loop *t, int which)
{
	switch (which) {
	case L_HANDSHAKE: return &t->handshaking;
	case L_CONNECT: return &t->connecting;
	case L_RELAY: return &t->relaying;
	case L_UNHEARD: return &t->unheard;
	default: return NULL;
	}
}

/* The connection at n of a phase list, NULL past its ends. */
static struct tcp_conn *conn_at(struct list_link *n)
{
	return n ? container_of(n, struct tcp_conn, link) : NULL;
}

static void phase_leave(struct tcp_conn *c)
{
	struct list *l = phase_list(c->t, c->list);
	if (!l)
		return;
	list_remove(l, &c->link);
	c->list = L_NONE;
}

/* Put c into list which as if appended at since. Every list has one
 * timeout, so appending as time goes keeps each in deadline order; the
 * first-byte deadline counts from the accept while connections reach its
 * list in the order their upstreams answered, hence the walk back. */
static void phase_enter_at(struct tcp_conn *c, int which, int64_t since)
{
	phase_leave(c);
	struct list *l = phase_list(c->t, which);
	struct list_link *after = l->tail;
	while (after && conn_at(after)->since_ns > since)
		after = after->prev;
	c->list = which;
	c->since_ns = since;
	list_insert_after(l, after, &c->link);
}

static void phase_enter(struct tcp_conn *c, int which)
{
	phase_enter_at(c, which, coarse_ns());
}

/* Relaying: on the idle timeout's list, or, while the client has sent
 * nothing and a first-byte deadline is set, on that deadline's. */
static void start_relaying(struct tcp_conn *c)
{
	if (c->heard || !c->t->set.first_byte_ms)
		phase_enter(c, L_RELAY);
	else
		phase_enter_at(c, L_UNHEARD, c->born_ns);
}

static void set_nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- connections per source ---- */

/* The source a connection counts under: an IPv4 address (as IPv4-mapped
 * IPv6, the form a dual-stack listener reports it in) or an IPv6 /64, the
 * least a site is given, so that stepping through the low bits does not
 * step around the limit. */
static void source_key(uint8_t key[16], const struct sockaddr_storage *sa)
{
	memset(key, 0, 16);
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &s4->sin_addr, 4);
	} else if (sa->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		memcpy(key, &s6->sin6_addr,
		       IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr) ? 16 : 8);
	}
}

static struct tcp_conn **source_chain(const struct tcp_loop *t,
				      const uint8_t key[16])
{
	uint64_t w[2];
	memcpy(w, key, sizeof(w));
	uint64_t h = (w[0] ^ t->source_seed) * 0x9e3779b97f4a7c15ull;
	h = (h ^ (h >> 29) ^ w[1]) * 0xbf58476d1ce4e5b9ull;
	return &t->by_source[(uint32_t)(h ^ (h >> 32)) & t->source_mask];
}

/* How many of the loop's connections come from key. */
static int source_count(const struct tcp_loop *t, const uint8_t key[16])
{
	int n = 0;
	if (!t->by_source)
		return 0;
	for (const struct tcp_conn *c = *source_chain(t, key); c; c = c->snext)
		n += memcmp(c->source, key, 16) == 0;
	return n;
}

static void source_add(struct tcp_conn *c)
{
	struct tcp_conn **head = source_chain(c->t, c->source);
	c->snext = *head;
	*head = c;
	c->sourced = true;
}

static void source_remove(struct tcp_conn *c)
{
	struct tcp_conn **p = source_chain(c->t, c->source);
	while (*p && *p != c)
		p = &(*p)->snext;
	if (*p)
		*p = c->snext;
	c->sourced = false;
}

/* As many buckets as max_conns (a power of two); a reload that raises it
 * moves the chains to a larger table. Without the memory the old table
 * goes on, with longer chains (or, never made, nothing is counted). */
static void source_table(struct tcp_loop *t)
{
	uint32_t want = 64, old = t->by_source ? t->source_mask + 1 : 0;
	while (want < (uint32_t)t->set.max_conns && want < (1u << 20))
		want <<= 1;
	if (want <= old)
		return;
	struct tcp_conn **b = calloc(want, sizeof(*b)), **ob = t->by_source;
	if (!b)
		return;
	t->by_source = b;
	t->source_mask = want - 1;
	for (uint32_t i = 0; i < old; i++)
		for (struct tcp_conn *c = ob[i], *next; c; c = next) {
			next = c->snext;
			source_add(c);
		}
	free(ob);
}

/* ---- listeners ---- */

static void listener_pause(struct tcp_listener *ls, enum tcp_lcounter why)
{
	struct tcp_loop *t = ls->t;
	ls->paused = true;
	loop_mod(t->loop, ls->fd, &ls->h, 0);
	stats_add(&t->stats.l[ls - t->ls][why], 1);
}

/* Accept again where paused; connections the kernel queued meanwhile are
 * reported at once by the epoll_ctl. */
static void listeners_resume(struct tcp_loop *t)
{
	if (t->resume_ns || t->nconns >= t->set.max_conns)
		return;
	for (int i = 0; i < TCP_MAX_LISTEN; i++) {
		struct tcp_listener *ls = &t->ls[i];
		if (ls->fd >= 0 && ls->paused) {
			ls->paused = false;
			loop_mod(t->loop, ls->fd, &ls->h, EPOLLIN);
		}
	}
}

/* ---- connections ---- */

static void conn_close(struct tcp_conn *c, enum tcp_close why)
{
	struct tcp_loop *t = c->t;
	/* What cannot be delivered is not passed off as a clean end. */
	bool abort = why == TCP_CLOSE_client_reset ||
		     why == TCP_CLOSE_upstream_reset ||
		     why == TCP_CLOSE_stalled;
	struct tcp_side *sides[2] = { &c->cl, &c->up };
	for (int i = 0; i < 2; i++) {
		struct tcp_side *x = sides[i];
		if (x->s.fd < 0)
			continue;
		loop_del(t->loop, x->s.fd, &x->h);
		x->s.ops->close(&x->s, abort);
	}
	phase_leave(c);
	if (c->sourced)
		source_remove(c);
	stats_add(&t->stats.closed[c->slot][why], 1);
	stats_set(&t->stats.active[c->slot], t->stats.active[c->slot] - 1);
	t->nconns--;
	c->dead = true;
	c->dnext = t->dying;
	t->dying = c;
	listeners_resume(t);
}

static void record(struct tcp_conn *c, struct tcp_side *src)
{
	int64_t us = (clock_ns(CLOCK_REALTIME) - src->in_ns) / 1000;
	src->in_ns = 0;
	c->t->record(c->t->record_arg, TCP_LAT_RELAY, us < 0 ? 0 : us);
}

/* The first stamped read after a wake-up: how long its bytes waited for
 * the loop. The loop's wake time is used once, by whichever path (this or
 * the datagrams') reads first. */
static void record_wake(struct tcp_loop *t, int64_t rx_ns)
{
	if (!t->loop->wake_ns)
		return;
	int64_t us = (t->loop->wake_ns - rx_ns) / 1000;
	t->loop->wake_ns = 0;
	t->record(t->record_arg, TCP_LAT_WAKE, us < 0 ? 0 : us);
}

/* Move src's bytes to dst: rounds of "write what is buffered, read what
 * fits", then pass src's end of stream on once all it sent is out. Sets
 * *more when it stopped with work left. Returns 0, or -1 with *why. */
static int pump(struct tcp_conn *c, struct tcp_side *src, struct tcp_side *dst,
		bool *more, enum tcp_close *why)
{
	struct tcp_stats *st = &c->t->stats;
	bool from_client = src == &c->cl;
	uint64_t *rx = from_client ? &st->l[c->slot][TCP_L_rx_bytes] :
		       &st->u[TCP_U_rx_bytes];
	uint64_t *tx = from_client ? &st->u[TCP_U_tx_bytes] :
		       &st->l[c->slot][TCP_L_tx_bytes];
	enum tcp_close src_fail = from_client ? TCP_CLOSE_client_reset :
				  TCP_CLOSE_upstream_reset;
	enum tcp_close dst_fail = from_client ? TCP_CLOSE_upstream_reset :
				  TCP_CLOSE_client_reset;
	bool active = false, unblocked = false;
	size_t n;
	for (int round = 0; round < ROUNDS; round++) {
		bool moved = false;
		if (dst->ready && !dst->wr_wait && src->tail > src->head) {
			size_t len = src->retry ? src->retry : src->tail - src->head;
			enum sock_rc rc = dst->s.ops->write(&dst->s,
					src->buf + src->head, len, &n);
			if (rc == SOCK_ERROR)
				return *why = dst_fail, -1;
			src->retry = rc == SOCK_AGAIN ? (uint32_t)len : 0;
			if (rc == SOCK_OK) {
				if (src->in_ns)
					record(c, src);
				src->head += (uint32_t)n;
				if (src->head == src->tail)
					src->head = src->tail = 0;
				stats_add(tx, n);
				moved = true;
				/* TLS: a read of dst waiting to write can, now
				 * that a write went out. */
				if (dst->rd_wait & EPOLLOUT) {
					dst->rd_wait = 0;
					unblocked = true;
				}
			}
			dst->wr_wait = dst->s.want;
		}
		if (src->ready && !src->eof && !src->rd_wait) {
			/* Room at the end only; a blocked TLS write may see its
			 * bytes move (SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER). */
			if (src->tail == c->cap && src->head > 0) {
				memmove(src->buf, src->buf + src->head,
					src->tail - src->head);
				src->tail -= src->head;
				src->head = 0;
			}
			if (src->tail == c->cap)
				goto rounds_done;
			enum sock_rc rc = src->s.ops->read(&src->s,
					src->buf + src->tail, c->cap - src->tail, &n);
			if (rc == SOCK_ERROR)
				return *why = src_fail, -1;
			if (rc != SOCK_AGAIN && from_client)
				c->heard = true;
			if (rc == SOCK_OK) {
				if (src->s.rx_ns)
					record_wake(c->t, src->s.rx_ns);
				if (src->head == src->tail)
					src->in_ns = src->s.rx_ns ? src->s.rx_ns :
						clock_ns(CLOCK_REALTIME);
				src->tail += (uint32_t)n;
				stats_add(rx, n);
				moved = true;
			} else if (rc == SOCK_EOF) {
				src->eof = true;
				moved = true;
			}
			src->rd_wait = src->s.want;
			/* TLS: a write to src waiting for input may have had
			 * it taken by this read (the record it waited for, no
			 * bytes for us), and its event with it: edge-triggered
			 * epoll drops an event whose readiness is gone. */
			if (src->wr_wait & EPOLLIN) {
				src->wr_wait = 0;
				unblocked = true;
			}
		}
rounds_done:
		if (!moved)
			break;
		active = true;
	}
	if (active && (c->list == L_RELAY || (c->list == L_UNHEARD && c->heard)))
		phase_enter(c, L_RELAY);
	if (src->eof && src->head == src->tail && dst->ready && !dst->shut &&
	    !dst->wr_wait) {
		enum sock_rc rc = dst->s.ops->shutdown(&dst->s);
		if (rc == SOCK_ERROR)
			return *why = dst_fail, -1;
		dst->shut = rc == SOCK_OK;
		dst->wr_wait = dst->s.want;
	}
	/* Anything still possible without an event is done on the next
	 * round of the loop, after the other handlers had their turn. */
	bool can_write = dst->ready && !dst->wr_wait &&
		(src->tail > src->head || (src->eof && !dst->shut));
	bool can_read = src->ready && !src->eof && !src->rd_wait &&
		(src->tail < c->cap || src->head > 0);
	if (can_write || can_read || unblocked)
		*more = true;
	return 0;
}

/* Watch x for what its blocked operations wait for; reading only while
 * its buffer has room, and then for the peer's FIN too (sock.h says why). */
static void interest(struct tcp_conn *c, struct tcp_side *x)
{
	uint32_t ev = x->wr_wait;
	if (!x->ready || (!x->eof && (x->tail < c->cap || x->head > 0)))
		ev |= x->rd_wait;
	if (ev & EPOLLIN)
		ev |= EPOLLRDHUP;
	if (ev != x->events && loop_mod(c->t->loop, x->s.fd, &x->h, ev) == 0)
		x->events = ev;
}

static bool on_event(struct loop *l, struct loop_handler *h, uint32_t events);

/* Open the upstream socket and start connecting. Returns 0, or -1 when the
 * connection was closed. */
static int start_connect(struct tcp_conn *c)
{
	struct tcp_loop *t = c->t;
	const struct addr *a = &t->set.upstream;
	phase_enter(c, L_CONNECT);
	stats_add(&t->stats.u[TCP_U_connects], 1);
	int fd = socket(a->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	if (fd < 0) {
		stats_add(&t->stats.u[TCP_U_no_socket], 1);
		conn_close(c, TCP_CLOSE_connect_failed);
		return -1;
	}
	set_nodelay(fd);
	if (a->kind == ADDR_TLS) {
		/* ALPN passthrough: offer the upstream what the client chose. */
		const unsigned char *proto = NULL;
		unsigned len = 0;
		if (c->cl.s.ssl)
			tls_alpn_chosen(c->cl.s.ssl, &proto, &len);
		struct ssl_st *ssl = tls_connect(t->set.upstream_tls,
						 t->set.upstream_host, proto, len);
		if (!ssl || sock_init_tls(&c->up.s, fd, ssl) < 0) {
			if (ssl)
				tls_ssl_free(ssl);
			close(fd);
			stats_add(&t->stats.u[TCP_U_no_socket], 1);
			conn_close(c, TCP_CLOSE_connect_failed);
			return -1;
		}
	} else {
		sock_init_plain(&c->up.s, fd);
	}
	if (t->set.kernel_stamps)
		sock_stamp_arrivals(&c->up.s);
	c->up.h.fn = on_event;
	c->up.events = 0;
	if (loop_add_events(t->loop, fd, &c->up.h, 0) < 0) {
		conn_close(c, TCP_CLOSE_connect_failed);
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)&a->sa, a->salen) == 0)
		return 0;
	if (errno != EINPROGRESS) {
		conn_close(c, TCP_CLOSE_connect_failed);
		return -1;
	}
	c->up.connecting = true;
	c->up.wr_wait = EPOLLOUT;
	return 0;
}

/* Do all that can be done now. Returns true when work is left (the loop
 * calls again), false when waiting for events or closed. */
static bool conn_run(struct tcp_conn *c)
{
	struct tcp_loop *t = c->t;
	enum sock_rc rc;
	if (!c->cl.ready && !c->cl.rd_wait) {
		rc = c->cl.s.ops->handshake(&c->cl.s);
		c->cl.rd_wait = c->cl.s.want;
		if (rc == SOCK_ERROR) {
			stats_add(&t->stats.hs_failed[c->slot][c->cl.s.fail], 1);
			conn_close(c, TCP_CLOSE_handshake);
			return false;
		}
		if (rc == SOCK_OK) {
			c->cl.ready = true;
			if (start_connect(c) < 0)
				return false;
		}
	}
	if (c->up.connecting && !c->up.wr_wait) {
		int err = 0;
		socklen_t len = sizeof(err);
		getsockopt(c->up.s.fd, SOL_SOCKET, SO_ERROR, &err, &len);
		/* A reset after the handshake (the upstream accepted, then
		 * reset before the loop saw the connect complete) is a reset,
		 * passed on as one, not a refusal. */
		if (err) {
			conn_close(c, err == ECONNRESET || err == EPIPE ?
				   TCP_CLOSE_upstream_reset :
				   TCP_CLOSE_connect_failed);
			return false;
		}
		c->up.connecting = false;
	}
	if (c->up.s.fd >= 0 && !c->up.connecting && !c->up.ready &&
	    !c->up.rd_wait) {
		rc = c->up.s.ops->handshake(&c->up.s);
		c->up.rd_wait = c->up.s.want;
		if (rc == SOCK_ERROR) {
			stats_add(&t->stats.u_hs_failed[c->up.s.fail], 1);
			conn_close(c, TCP_CLOSE_upstream_tls);
			return false;
		}
		if (rc == SOCK_OK) {
			c->up.ready = true;
			stats_add(&t->stats.u[TCP_U_connected], 1);
			start_relaying(c);
		}
	}
	bool more = false;
	enum tcp_close why;
	if (pump(c, &c->cl, &c->up, &more, &why) < 0 ||
	    pump(c, &c->up, &c->cl, &more, &why) < 0) {
		conn_close(c, why);
		return false;
	}
	if (c->cl.eof && c->up.eof && c->cl.shut && c->up.shut) {
		conn_close(c, TCP_CLOSE_done);
		return false;
	}
	interest(c, &c->cl);
	if (c->up.s.fd >= 0)
		interest(c, &c->up);
	return more;
}

static bool on_event(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct tcp_side *x = container_of(h, struct tcp_side, h);
	struct tcp_conn *c = x->c;
	(void)l;
	if (c->dead)
		return false;
	/* A reset after the peer's FIN: no read of this side will report it,
	 * and with nothing to write to it neither will a write, so the other
	 * peer would go on (and hold the slot) until the idle timeout. On a
	 * TCP socket without an error queue, EPOLLERR is a pending error. */
	if ((events & EPOLLERR) && x->ready && x->eof) {
		conn_close(c, x == &c->cl ? TCP_CLOSE_client_reset :
			   TCP_CLOSE_upstream_reset);
		return false;
	}
	/* An error or hang-up is for the next operation to report. */
	if (events & (EPOLLERR | EPOLLHUP))
		x->rd_wait = x->wr_wait = 0;
	if (events & EPOLLRDHUP)
		x->s.rdhup = true;
	if (events & x->rd_wait)
		x->rd_wait = 0;
	if (events & x->wr_wait)
		x->wr_wait = 0;
	return conn_run(c);
}

/* A connection on listener slot, neither side with a socket yet. NULL
 * without memory. */
static struct tcp_conn *conn_alloc(struct tcp_loop *t, int slot)
{
	uint32_t cap = (uint32_t)t->set.buffer;
	/* The buffers need no zeroing: only what was read is ever sent. */
	struct tcp_conn *c = malloc(sizeof(*c) + 2 * (size_t)cap);
	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->slot = slot;
	c->cap = cap;
	c->cl.buf = (char *)(c + 1);
	c->up.buf = c->cl.buf + cap;
	c->cl.c = c->up.c = c;
	c->cl.h.fn = c->up.h.fn = on_event;
	c->cl.s.fd = c->up.s.fd = -1;
	c->born_ns = coarse_ns();
	return c;
}

/* Count c, its client socket in place, as accepted from source. */
static void conn_admit(struct tcp_conn *c, const uint8_t source[16])
{
	struct tcp_loop *t = c->t;
	memcpy(c->source, source, sizeof(c->source));
	if (t->by_source)
		source_add(c);
	t->nconns++;
	stats_add(&t->stats.l[c->slot][TCP_L_accepted], 1);
	stats_set(&t->stats.active[c->slot], t->stats.active[c->slot] + 1);
}

static void conn_new(struct tcp_loop *t, int slot, int fd,
		     const uint8_t source[16])
{
	struct tcp_listener *ls = &t->ls[slot];
	struct tcp_conn *c = conn_alloc(t, slot);
	struct ssl_st *ssl = NULL;
	if (c && ls->tls) {
		ssl = tls_accept(t->set.server_tls);
		if (ssl && sock_init_tls(&c->cl.s, fd, ssl) < 0) {
			tls_ssl_free(ssl);
			ssl = NULL;
		}
	}
	if (!c || (ls->tls && !ssl)) {
		free(c);
		close(fd);
		stats_add(&t->stats.l[slot][TCP_L_accept_errors], 1);
		return;
	}
	if (!ls->tls)
		sock_init_plain(&c->cl.s, fd);
	if (t->set.kernel_stamps)
		sock_stamp_arrivals(&c->cl.s);
	set_nodelay(fd);
	conn_admit(c, source);
	if (loop_add_events(t->loop, fd, &c->cl.h, 0) < 0) {
		conn_close(c, TCP_CLOSE_client_reset);
		return;
	}
	if (ls->tls) {
		phase_enter(c, L_HANDSHAKE);
	} else {
		c->cl.ready = true;
		if (start_connect(c) < 0)
			return;
	}
	/* The client may have sent already; edge-triggered epoll would not
	 * say so. */
	if (conn_run(c))
		loop_again(t->loop, &c->cl.h);
}

static bool on_accept(struct loop *l, struct loop_handler *h, uint32_t events)
{
	struct tcp_listener *ls = container_of(h, struct tcp_listener, h);
	struct tcp_loop *t = ls->t;
	int slot = (int)(ls - t->ls);
	(void)l;
	(void)events;
	for (int i = 0; i < ACCEPTS; i++) {
		if (ls->paused || ls->fd < 0)
			return false;
		if (t->nconns >= t->set.max_conns) {
			listener_pause(ls, TCP_L_paused_limit);
			return false;
		}
		struct sockaddr_storage sa;
		socklen_t salen = sizeof(sa);
		int fd = accept4(ls->fd, (struct sockaddr *)&sa, &salen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			uint8_t key[16];
			source_key(key, &sa);
			if (t->set.max_per_source &&
			    source_count(t, key) >= t->set.max_per_source) {
				/* A reset: an end of stream could pass for
				 * the upstream's answer. */
				struct sock s;
				sock_init_plain(&s, fd);
				s.ops->close(&s, true);
				stats_add(&t->stats.l[slot][TCP_L_refused_source], 1);
				continue;
			}
			conn_new(t, slot, fd, key);
			continue;
		}
		switch (errno) {
		case EAGAIN:
			return false;
		case EINTR:
		case ECONNABORTED:
		case EPROTO:
			continue;	/* that one client gave up; next */
		case EMFILE:
		case ENFILE:
		case ENOBUFS:
		case ENOMEM:
			/* Level-triggered thinking would retry at once and
			 * spin; wait for descriptors to come back instead. */
			listener_pause(ls, TCP_L_paused_no_fd);
			t->resume_ns = coarse_ns() + BACKOFF_NS;
			return false;
		default:
			stats_add(&t->stats.l[slot][TCP_L_accept_errors], 1);
			return false;
		}
	}
	return true;
}

int tcp_open_listener(const struct addr *a, char *err, size_t errlen)
{
	int fd = addr_listen_socket(a, SOCK_STREAM, err, errlen);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	return addr_bind_listener(a, fd, BACKLOG, err, errlen);
}

void tcp_loop_init(struct tcp_loop *t, struct loop *l,
		   const struct tcp_settings *set,
		   void (*rec)(void *arg, enum tcp_latency what, int64_t us),
		   void *arg)
{
	memset(t, 0, sizeof(*t));
	t->loop = l;
	t->set = *set;
	t->record = rec;
	t->record_arg = arg;
	for (int i = 0; i < TCP_MAX_LISTEN; i++) {
		t->ls[i].fd = -1;
		t->stats.id[i] = -1;
	}
	if (getrandom(&t->source_seed, sizeof(t->source_seed), GRND_NONBLOCK) !=
	    sizeof(t->source_seed))
		t->source_seed = (uint64_t)(uintptr_t)t ^ (uint64_t)coarse_ns();
	source_table(t);
}

void tcp_loop_configure(struct tcp_loop *t, const struct tcp_settings *set)
{
	t->set = *set;
	source_table(t);
	listeners_resume(t);
}

int tcp_listener_slot(const struct tcp_loop *t, int id)
{
	for (int i = 0; i < TCP_MAX_LISTEN; i++)
		if (t->ls[i].fd >= 0 && t->ls[i].id == id)
			return i;
	return -1;
}

int tcp_add_listener(struct tcp_loop *t, int id, int fd, bool tls)
{
	for (int i = 0; i < TCP_MAX_LISTEN; i++) {
		struct tcp_listener *ls = &t->ls[i];
		if (ls->fd >= 0)
			continue;
		ls->h.fn = on_accept;
		ls->t = t;
		ls->id = id;
		ls->tls = tls;
		ls->paused = false;
		/* A new listener in this slot starts its counts afresh. */
		memset(t->stats.l[i], 0, sizeof(t->stats.l[i]));
		memset(t->stats.closed[i], 0, sizeof(t->stats.closed[i]));
		memset(t->stats.hs_failed[i], 0, sizeof(t->stats.hs_failed[i]));
		stats_set(&t->stats.active[i], 0);
		__atomic_store_n(&t->stats.id[i], id, __ATOMIC_RELEASE);
		/* Connections already queued are reported by the add itself. */
		if (loop_add_events(t->loop, fd, &ls->h, EPOLLIN) < 0)
			return -1;
		ls->fd = fd;
		return 0;
	}
	errno = ENOSPC;
	return -1;
}

/* Close the connections of listener slot (-1: all). */
static void close_conns(struct tcp_loop *t, int slot)
{
	struct list *lists[4] = { &t->handshaking, &t->connecting,
				  &t->relaying, &t->unheard };
	for (int i = 0; i < 4; i++) {
		struct tcp_conn *c = conn_at(lists[i]->head), *next;
		for (; c; c = next) {
			next = conn_at(c->link.next);
			if (slot < 0 || c->slot == slot)
				conn_close(c, TCP_CLOSE_shutdown);
		}
	}
}

void tcp_stop_listening(struct tcp_loop *t)
{
	for (int i = 0; i < TCP_MAX_LISTEN; i++) {
		struct tcp_listener *ls = &t->ls[i];
		if (ls->fd < 0)
			continue;
		loop_del(t->loop, ls->fd, &ls->h);
		close(ls->fd);
		ls->fd = -1;
	}
}

void tcp_remove_listener(struct tcp_loop *t, int id)
{
	int slot = tcp_listener_slot(t, id);
	if (slot < 0)
		return;
	struct tcp_listener *ls = &t->ls[slot];
	loop_del(t->loop, ls->fd, &ls->h);
	close(ls->fd);
	ls->fd = -1;
	close_conns(t, slot);
}

static void free_list(struct tcp_conn *c)
{
	while (c) {
		struct tcp_conn *next = c->dnext;
		free(c);
		c = next;
	}
}

void tcp_loop_free(struct tcp_loop *t)
{
	for (int i = 0; i < TCP_MAX_LISTEN; i++)
		if (t->ls[i].fd >= 0)
			tcp_remove_listener(t, t->ls[i].id);
	close_conns(t, -1);
	free_list(t->dying);
	free_list(t->dead);
	t->dying = t->dead = NULL;
	free(t->by_source);
	t->by_source = NULL;
}

/* Close, oldest first, what has been in list l longer than ms. */
static void expire(struct tcp_loop *t, struct list *l, int ms, int64_t now,
		   int *budget)
{
	int64_t limit = (int64_t)ms * 1000000;
	struct tcp_conn *c;
	while (*budget > 0 && (c = conn_at(l->head)) && now - c->since_ns >= limit) {
		(*budget)--;
		enum tcp_close why;
		if (c->list == L_HANDSHAKE) {
			stats_add(&t->stats.hs_failed[c->slot][SOCK_FAIL_timeout], 1);
			why = TCP_CLOSE_handshake;
		} else if (c->list == L_CONNECT) {
			bool tls = c->up.s.fd >= 0 && !c->up.connecting;
			if (tls)
				stats_add(&t->stats.u_hs_failed[SOCK_FAIL_timeout], 1);
			why = tls ? TCP_CLOSE_upstream_tls : TCP_CLOSE_connect_timeout;
		} else if (c->list == L_UNHEARD && t->set.first_byte_ms) {
			why = TCP_CLOSE_silent;
		} else {
			bool pending = c->cl.tail > c->cl.head ||
				       c->up.tail > c->up.head;
			why = pending ? TCP_CLOSE_stalled : TCP_CLOSE_idle;
		}
		conn_close(c, why);
	}
}

void tcp_tick(struct tcp_loop *t)
{
	/* Events of the last batch that named these are long handled. */
	free_list(t->dead);
	t->dead = t->dying;
	t->dying = NULL;

	int64_t now = coarse_ns();
	int budget = EXPIRE_PER_TICK;
	expire(t, &t->handshaking, t->set.handshake_ms, now, &budget);
	expire(t, &t->connecting, t->set.connect_ms, now, &budget);
	expire(t, &t->relaying, t->set.idle_ms, now, &budget);
	/* A reload may have lifted the deadline: then silence is idleness. */
	expire(t, &t->unheard, t->set.first_byte_ms ? t->set.first_byte_ms :
	       t->set.idle_ms, now, &budget);
	if (t->resume_ns && now >= t->resume_ns) {
		t->resume_ns = 0;
		listeners_resume(t);
	}
}

void tcp_stats_listener(struct tcp_totals *out, const struct tcp_stats *const *s,
			int n, int id)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++)
		for (int j = 0; j < TCP_MAX_LISTEN; j++) {
			if (__atomic_load_n(&s[i]->id[j], __ATOMIC_ACQUIRE) != id)
				continue;
			for (int k = 0; k < TCP_NLCOUNTERS; k++)
				out->l[k] += __atomic_load_n(&s[i]->l[j][k],
							     __ATOMIC_RELAXED);
			for (int k = 0; k < TCP_NCLOSES; k++)
				out->closed[k] += __atomic_load_n(
					&s[i]->closed[j][k], __ATOMIC_RELAXED);
			for (int k = 0; k < SOCK_NFAILS; k++)
				out->hs_failed[k] += __atomic_load_n(
					&s[i]->hs_failed[j][k], __ATOMIC_RELAXED);
			out->active += __atomic_load_n(&s[i]->active[j],
						       __ATOMIC_RELAXED);
		}
}

void tcp_stats_upstream(uint64_t u[TCP_NUCOUNTERS], uint64_t hs[SOCK_NFAILS],
			const struct tcp_stats *const *s, int n)
{
	memset(u, 0, sizeof(uint64_t) * TCP_NUCOUNTERS);
	memset(hs, 0, sizeof(uint64_t) * SOCK_NFAILS);
	for (int i = 0; i < n; i++) {
		for (int k = 0; k < TCP_NUCOUNTERS; k++)
			u[k] += __atomic_load_n(&s[i]->u[k], __ATOMIC_RELAXED);
		for (int k = 0; k < SOCK_NFAILS; k++)
			hs[k] += __atomic_load_n(&s[i]->u_hs_failed[k],
						 __ATOMIC_RELAXED);
	}
}

/* Add the counts name(k): v[k] for k in [from, n) to o. */
static json_t *json_counts(json_t *o, const char *(*name)(int),
			   const uint64_t *v, int from, int n)
{
	for (int k = from; k < n; k++)
		json_object_set_new(o, name(k), json_integer((json_int_t)v[k]));
	return o;
}

static const char *close_name(int k) { return close_names[k]; }
static const char *lc_name(int k) { return lc_names[k]; }
static const char *uc_name(int k) { return uc_names[k]; }
static const char *fail_name(int k) { return sock_fail_name(k); }

void tcp_json(json_t *listeners, json_t *upstreams,
	      const struct tcp_stats *const *s, int n,
	      const struct tcp_label *labels, int nl, const char *upstream)
{
	struct tcp_totals tot;
	for (int i = 0; i < nl; i++) {
		tcp_stats_listener(&tot, s, n, labels[i].id);
		json_t *o = json_counts(json_pack("{s:i}", "id", labels[i].id),
					lc_name, tot.l, 0, TCP_NLCOUNTERS);
		json_object_set_new(o, "active_connections",
				    json_integer(tot.active));
		json_object_set_new(o, "closed", json_counts(json_object(),
				    close_name, tot.closed, 0, TCP_NCLOSES));
		json_object_set_new(o, "handshake_failures",
				    json_counts(json_object(), fail_name,
						tot.hs_failed, 1, SOCK_NFAILS));
		json_object_set_new(listeners, labels[i].text, o);
	}
	if (!upstream)
		return;
	uint64_t u[TCP_NUCOUNTERS], hs[SOCK_NFAILS];
	tcp_stats_upstream(u, hs, s, n);
	json_t *o = json_counts(json_object(), uc_name, u, 0, TCP_NUCOUNTERS);
	json_object_set_new(o, "handshake_failures",
			    json_counts(json_object(), fail_name, hs, 1,
					SOCK_NFAILS));
	json_object_set_new(upstreams, upstream, o);
}
