/*
 * libFuzzer target for the flow table (server/flow.c) driven the way the
 * datagram path (server/udp.c) drives it: a client picks its own address,
 * port and scope, and so its flow key and hash chain, and the timing of
 * its datagrams. Each step is checked against a plain model of what
 * relay(8) promises: a datagram finds its client's flow or makes one;
 * the table never holds more than max_flows; when it is full the flow to
 * close is the one idle longest of those not waiting for a reply, else
 * the least recently active one whose reply is overdue, else none (the
 * newcomer is dropped); a flow whose upstream refused it or was replaced
 * by a reload moves; idle flows expire oldest first. After every step the
 * LRU and idle lists, the hash chains and the free list must agree with
 * the model.
 *
 * Input: byte 0 sets max_flows (1..32), byte 1 the reply wait and byte 2
 * the idle timeout (milliseconds, x16); then steps, each an opcode byte
 * and its operands (a client is a family/listener byte, a port, a scope
 * and an address; steps that name a client by index take a byte).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/flow.h"
#include "../../server/udp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CAP		32
#define MS		1000000LL
#define EXPIRE_PER_TICK	64	/* udp.c's bound */

/* A client as the model knows it: its own idea of the key, not flow.c's. */
struct client {
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct sockaddr_un un;
	} a;
	socklen_t len;
	int listener;
};

/* What the model holds per open flow; entries are kept oldest first. */
struct entry {
	struct client c;
	struct flow *f;
	int64_t last_ns;
	uint32_t pending;
	int upstream_id;
	bool refused;
};

struct model {
	struct flow_table t;
	struct entry e[MAX_CAP];
	int n;
	int64_t now, wait_ns, idle_ns;
	int upstream_id;
};

struct input {
	const uint8_t *p, *end;
};

static uint8_t byte(struct input *in)
{
	return in->p < in->end ? *in->p++ : 0;
}

static void bytes(struct input *in, void *out, size_t n)
{
	size_t have = (size_t)(in->end - in->p);
	memset(out, 0, n);
	memcpy(out, in->p, n < have ? n : have);
	in->p += n < have ? n : have;
}

/* A client address, as recvmmsg would name it: IPv4, IPv6 with a scope
 * (v4-mapped addresses included: a dual-stack listener's form), or an
 * AF_UNIX name of any length, NULs included. */
static void read_client(struct input *in, struct client *c)
{
	uint8_t how = byte(in);
	memset(c, 0, sizeof(*c));
	c->listener = how % UDP_MAX_LISTEN;
	if ((how & 0xc0) == 0x40) {
		size_t n = byte(in) % (sizeof(c->a.un.sun_path) + 1);
		c->a.un.sun_family = AF_UNIX;
		bytes(in, c->a.un.sun_path, n);
		c->len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else if (how & 0x80) {
		c->a.in6.sin6_family = AF_INET6;
		bytes(in, &c->a.in6.sin6_port, 2);
		bytes(in, &c->a.in6.sin6_scope_id, how & 0x40 ? 4 : 0);
		bytes(in, &c->a.in6.sin6_addr, 16);
		c->len = sizeof(c->a.in6);
	} else {
		c->a.in.sin_family = AF_INET;
		bytes(in, &c->a.in.sin_port, 2);
		bytes(in, &c->a.in.sin_addr, 4);
		c->len = sizeof(c->a.in);
	}
}

/* The same 4-tuple (and listener): what must share one flow. */
static bool same_client(const struct client *x, const struct client *y)
{
	if (x->listener != y->listener || x->a.sa.sa_family != y->a.sa.sa_family)
		return false;
	if (x->a.sa.sa_family == AF_UNIX)
		return x->len == y->len &&
		       memcmp(x->a.un.sun_path, y->a.un.sun_path,
			      x->len - offsetof(struct sockaddr_un, sun_path)) == 0;
	if (x->a.sa.sa_family == AF_INET)
		return x->a.in.sin_port == y->a.in.sin_port &&
		       x->a.in.sin_addr.s_addr == y->a.in.sin_addr.s_addr;
	return x->a.in6.sin6_port == y->a.in6.sin6_port &&
	       x->a.in6.sin6_scope_id == y->a.in6.sin6_scope_id &&
	       memcmp(&x->a.in6.sin6_addr, &y->a.in6.sin6_addr, 16) == 0;
}

static int model_find(const struct model *m, const struct client *c)
{
	for (int i = 0; i < m->n; i++)
		if (same_client(&m->e[i].c, c))
			return i;
	return -1;
}

static struct flow *table_find(struct model *m, const struct client *c)
{
	struct flow_key k;
	flow_key_make(&k, &c->a.sa, c->len, c->listener);
	return flow_lookup(&m->t, &k);
}

/* Move entry i to the young end (it was active now). */
static void model_touch(struct model *m, int i)
{
	struct entry e = m->e[i];
	memmove(&m->e[i], &m->e[i + 1], (size_t)(m->n - i - 1) * sizeof(e));
	e.last_ns = m->now;
	m->e[m->n - 1] = e;
}

static void model_remove(struct model *m, int i)
{
	flow_remove(&m->t, m->e[i].f);
	memmove(&m->e[i], &m->e[i + 1], (size_t)(m->n - i - 1) * sizeof(m->e[0]));
	m->n--;
}

/* relay(8)'s eviction rule, on the model. -1: turn the newcomer away. */
static int model_victim(const struct model *m)
{
	for (int i = 0; i < m->n; i++)
		if (!m->e[i].pending)
			return i;
	return m->n && m->now - m->e[0].last_ns >= m->wait_ns ? 0 : -1;
}

/* n datagrams from c, as relay_requests handles them. */
static void datagram(struct model *m, const struct client *c, uint32_t n,
		     bool echo)
{
	int i = model_find(m, c);
	struct flow *f = table_find(m, c);
	if (i >= 0 ? f != m->e[i].f : f != NULL)
		abort();	/* a lookup that misses its flow, or finds one */
	if (i >= 0 && (m->e[i].refused || m->e[i].upstream_id != m->upstream_id)) {
		model_remove(m, i);	/* moved */
		i = -1;
	}
	if (i < 0) {
		if (flow_full(&m->t) != (m->n == m->t.cap))
			abort();
		if (flow_full(&m->t)) {
			int v = model_victim(m);
			struct flow *vf = flow_victim(&m->t, m->now, m->wait_ns);
			if (v < 0 ? vf != NULL : vf != m->e[v].f)
				abort();
			if (v < 0)
				return;		/* dropped: flows_busy */
			model_remove(m, v);
		}
		struct flow_key k;
		flow_key_make(&k, &c->a.sa, c->len, c->listener);
		f = flow_insert(&m->t, &k, &c->a.sa, c->len, m->now);
		if (!f || f->pending || f->client_len != c->len ||
		    memcmp(&f->client, &c->a, c->len) != 0)
			abort();
		f->upstream_id = m->upstream_id;
		i = m->n++;
		m->e[i] = (struct entry){ .c = *c, .f = f, .last_ns = m->now,
					  .upstream_id = m->upstream_id };
	}
	flow_sent(&m->t, f, echo ? 0 : n, m->now);
	uint32_t p = m->e[i].pending;
	m->e[i].pending = echo ? p : (p + n < p ? UINT32_MAX : p + n);
	model_touch(m, i);
}

/* n replies (or, refused, an ICMP port unreachable) for model entry i. */
static void reply(struct model *m, int i, uint32_t n, bool refused)
{
	struct flow *f = m->e[i].f;
	if (refused) {
		f->refused = 1;
		m->e[i].refused = true;
		n = f->pending;
	}
	flow_answered(&m->t, f, n, m->now);
	m->e[i].pending = m->e[i].pending > n ? m->e[i].pending - n : 0;
	model_touch(m, i);
}

/* udp_tick: idle flows expire, oldest first, a bounded number. */
static void tick(struct model *m)
{
	for (int k = 0; k < EXPIRE_PER_TICK; k++) {
		struct flow *o = flow_oldest(&m->t);
		if (m->n ? o != m->e[0].f : o != NULL)
			abort();
		if (!o || m->now - o->last_ns < m->idle_ns)
			break;
		model_remove(m, 0);
	}
}

/* udp_remove_listener: walk the flows, closing the listener's. */
static void remove_listener(struct model *m, int listener)
{
	struct flow *f = flow_oldest(&m->t), *next;
	for (int i = 0; f; f = next) {
		next = flow_younger(f);
		if (f != m->e[i].f)
			abort();
		if (f->key.listener == listener)
			model_remove(m, i);
		else
			i++;
	}
}

/* l's back links and tail must agree with its forward links (which the
 * model's walks have checked by then). */
static void check_links(const struct list *l)
{
	const struct list_link *prev = NULL;
	for (const struct list_link *n = l->head; n; prev = n, n = n->next)
		if (n->prev != prev)
			abort();
	if (l->tail != prev)
		abort();
}

/* Everything the table keeps must agree with the model. */
static void check(struct model *m)
{
	struct flow_table *t = &m->t;
	if (t->active != m->n || m->n > t->cap)
		abort();
	int i = 0, nfree = 0;
	const struct list_link *idle = NULL;	/* the last idle one met */
	for (struct flow *f = flow_oldest(t); f; f = flow_younger(f), i++) {
		const struct entry *e = &m->e[i];
		if (i >= m->n || f != e->f || !f->used || f->table != t ||
		    f->last_ns != e->last_ns || f->pending != e->pending ||
		    f->key.listener != e->c.listener || table_find(m, &e->c) != f)
			abort();
		if (!e->pending) {	/* the idle list: oldest first too */
			if ((idle ? idle->next : t->idle.head) != &f->idle_link)
				abort();
			idle = &f->idle_link;
		} else if (f->idle_link.prev || f->idle_link.next ||
			   t->idle.head == &f->idle_link) {
			abort();
		}
	}
	if (i != m->n || (idle ? idle->next : t->idle.head))
		abort();
	check_links(&t->lru);
	check_links(&t->idle);
	for (int32_t s = t->free_head; s >= 0; s = t->flows[s].hnext)
		if (t->flows[s].used || ++nfree > t->cap)
			abort();
	if (nfree != t->cap - m->n)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct input in = { data, data + size };
	memset(&m, 0, sizeof(m));
	if (flow_table_init(&m.t, 1 + byte(&in) % MAX_CAP) < 0)
		abort();
	m.wait_ns = (int64_t)byte(&in) * 16 * MS;
	m.idle_ns = (int64_t)byte(&in) * 16 * MS;
	m.now = 1000 * MS;
	struct client c;
	while (in.p < in.end) {
		uint8_t op = byte(&in);
		switch (op % 8) {
		case 0:
		case 1:		/* datagrams from a client, to the upstream */
		case 2:		/* ... or to echo (nothing to wait for) */
			read_client(&in, &c);
			datagram(&m, &c, 1 + op / 8 % 8, op % 8 == 2);
			break;
		case 3:		/* a datagram from an open flow's client again */
			if (m.n) {
				c = m.e[byte(&in) % m.n].c;	/* the entry moves */
				datagram(&m, &c, 1 + op / 8 % 8, false);
			}
			break;
		case 4:		/* replies, or the upstream refused */
			if (m.n)
				reply(&m, byte(&in) % m.n, op / 8 % 16,
				      op & 0x80);
			break;
		case 5:		/* time passes, then the tick */
			m.now += (int64_t)byte(&in) * 4 * MS;
			tick(&m);
			break;
		case 6:		/* a listener goes away */
			remove_listener(&m, byte(&in) % UDP_MAX_LISTEN);
			break;
		case 7:		/* a reload names another upstream */
			m.upstream_id++;
			break;
		}
		check(&m);
	}
	flow_table_free(&m.t);
	return 0;
}
