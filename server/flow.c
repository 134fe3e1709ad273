/*
 * flow: open hashing with chains threaded through the slot array by index
 * (int32_t, -1 ends a chain), twice as many buckets as slots.
 */
#include "flow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

int flow_table_init(struct flow_table *t, int cap)
{
	memset(t, 0, sizeof(*t));
	if (cap < 1) {
		errno = EINVAL;
		return -1;
	}
	uint32_t nb = 2;
	while (nb < 2u * (uint32_t)cap)
		nb <<= 1;
	t->flows = calloc((size_t)cap, sizeof(*t->flows));
	t->buckets = malloc(nb * sizeof(*t->buckets));
	if (!t->flows || !t->buckets) {
		flow_table_free(t);
		errno = ENOMEM;
		return -1;
	}
	t->cap = cap;
	t->mask = nb - 1;
	for (uint32_t i = 0; i < nb; i++)
		t->buckets[i] = -1;
	for (int32_t i = 0; i < cap; i++) {
		t->flows[i].fd = -1;
		t->flows[i].hnext = i + 1 < cap ? i + 1 : -1;
	}
	t->free_head = 0;
	t->lru_head = t->lru_tail = -1;
	t->idle_head = t->idle_tail = -1;
	if (getrandom(&t->seed, sizeof(t->seed), GRND_NONBLOCK) != sizeof(t->seed))
		t->seed = (uint64_t)(uintptr_t)t ^ 0x9e3779b97f4a7c15ull;
	return 0;
}

void flow_table_free(struct flow_table *t)
{
	free(t->flows);
	free(t->buckets);
	t->flows = NULL;
	t->buckets = NULL;
}

void flow_key_make(struct flow_key *k, const struct sockaddr *sa, int listener)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)sa->sa_family;
	k->listener = (uint8_t)listener;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		k->port = s4->sin_port;
		memcpy(k->addr, &s4->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		k->port = s6->sin6_port;
		k->scope = s6->sin6_scope_id;
		memcpy(k->addr, &s6->sin6_addr, 16);
	}
}

/* A multiply-xorshift mix over the key's 64-bit words, keyed by the seed. */
static uint32_t key_hash(const struct flow_table *t, const struct flow_key *k)
{
	uint64_t w[3];
	memcpy(w, k, sizeof(w));
	uint64_t h = t->seed;
	for (int i = 0; i < 3; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h & t->mask;
}

_Static_assert(sizeof(struct flow_key) == 24, "flow_key is hashed as 3 words");

struct flow *flow_lookup(struct flow_table *t, const struct flow_key *k)
{
	for (int32_t i = t->buckets[key_hash(t, k)]; i >= 0; i = t->flows[i].hnext)
		if (memcmp(&t->flows[i].key, k, sizeof(*k)) == 0)
			return &t->flows[i];
	return NULL;
}

static void lru_unlink(struct flow_table *t, struct flow *f)
{
	if (f->prev >= 0)
		t->flows[f->prev].next = f->next;
	else
		t->lru_head = f->next;
	if (f->next >= 0)
		t->flows[f->next].prev = f->prev;
	else
		t->lru_tail = f->prev;
}

static void lru_append(struct flow_table *t, struct flow *f)
{
	int32_t i = (int32_t)(f - t->flows);
	f->prev = t->lru_tail;
	f->next = -1;
	if (t->lru_tail >= 0)
		t->flows[t->lru_tail].next = i;
	else
		t->lru_head = i;
	t->lru_tail = i;
}

/* The idle list: the same doubly linked list through iprev/inext. */
static void idle_unlink(struct flow_table *t, struct flow *f)
{
	if (!f->idle)
		return;
	if (f->iprev >= 0)
		t->flows[f->iprev].inext = f->inext;
	else
		t->idle_head = f->inext;
	if (f->inext >= 0)
		t->flows[f->inext].iprev = f->iprev;
	else
		t->idle_tail = f->iprev;
	f->idle = 0;
}

static void idle_append(struct flow_table *t, struct flow *f)
{
	int32_t i = (int32_t)(f - t->flows);
	f->iprev = t->idle_tail;
	f->inext = -1;
	if (t->idle_tail >= 0)
		t->flows[t->idle_tail].inext = i;
	else
		t->idle_head = i;
	t->idle_tail = i;
	f->idle = 1;
}

struct flow *flow_insert(struct flow_table *t, const struct flow_key *k,
			 const struct sockaddr *client, socklen_t len,
			 int64_t now_ns)
{
	if (t->free_head < 0)
		return NULL;
	int32_t i = t->free_head;
	struct flow *f = &t->flows[i];
	t->free_head = f->hnext;
	memset(f, 0, sizeof(*f));
	f->table = t;
	f->key = *k;
	memcpy(&f->client, client, len);
	f->client_len = len;
	f->fd = -1;
	f->last_ns = now_ns;
	f->used = 1;
	uint32_t b = key_hash(t, k);
	f->hnext = t->buckets[b];
	t->buckets[b] = i;
	lru_append(t, f);
	idle_append(t, f);
	t->active++;
	return f;
}

void flow_touch(struct flow_table *t, struct flow *f, int64_t now_ns)
{
	int32_t i = (int32_t)(f - t->flows);
	f->last_ns = now_ns;
	if (t->lru_tail != i) {
		lru_unlink(t, f);
		lru_append(t, f);
	}
	if (f->pending && f->idle)
		idle_unlink(t, f);
	else if (!f->pending && t->idle_tail != i) {
		idle_unlink(t, f);
		idle_append(t, f);
	}
}

void flow_sent(struct flow_table *t, struct flow *f, uint32_t n,
	       int64_t now_ns)
{
	f->pending = f->pending + n < f->pending ? UINT32_MAX : f->pending + n;
	flow_touch(t, f, now_ns);
}

void flow_answered(struct flow_table *t, struct flow *f, uint32_t n,
		   int64_t now_ns)
{
	f->pending = f->pending > n ? f->pending - n : 0;
	flow_touch(t, f, now_ns);
}

struct flow *flow_victim(struct flow_table *t, int64_t now_ns,
			 int64_t wait_ns)
{
	if (t->idle_head >= 0)
		return &t->flows[t->idle_head];
	struct flow *o = flow_oldest(t);
	return o && now_ns - o->last_ns >= wait_ns ? o : NULL;
}

void flow_remove(struct flow_table *t, struct flow *f)
{
	int32_t i = (int32_t)(f - t->flows);
	for (int32_t *p = &t->buckets[key_hash(t, &f->key)]; *p >= 0;
	     p = &t->flows[*p].hnext)
		if (*p == i) {
			*p = f->hnext;
			break;
		}
	lru_unlink(t, f);
	idle_unlink(t, f);
	f->used = 0;
	f->fd = -1;
	f->hnext = t->free_head;
	t->free_head = i;
	t->active--;
}

struct flow *flow_oldest(struct flow_table *t)
{
	return t->lru_head >= 0 ? &t->flows[t->lru_head] : NULL;
}

struct flow *flow_younger(struct flow_table *t, const struct flow *f)
{
	return f->next >= 0 ? &t->flows[f->next] : NULL;
}

int flow_full(const struct flow_table *t)
{
	return t->free_head < 0;
}
