/*
 * flow: open hashing with chains threaded through the slot array by index
 * (int32_t, -1 ends a chain), twice as many buckets as slots.
 */
#include "flow.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
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

void flow_key_make(struct flow_key *k, const struct sockaddr *sa,
		   socklen_t len, int listener)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)sa->sa_family;
	k->listener = (uint8_t)listener;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;
		k->port = s4->sin_port;
		memcpy(k->addr, &s4->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;
		k->port = s6->sin6_port;
		k->scope = s6->sin6_scope_id;
		memcpy(k->addr, &s6->sin6_addr, 16);
	} else {
		/* The kernel gives the name's own length: an abstract name
		 * may hold NULs, so its bytes are the name, not a string. */
		size_t off = offsetof(struct sockaddr_un, sun_path);
		size_t n = len > off ? len - off : 0;
		if (n > FLOW_ADDR_MAX)
			n = FLOW_ADDR_MAX;
		k->port = (uint16_t)n;
		memcpy(k->addr, ((const struct sockaddr_un *)(const void *)sa)->sun_path, n);
	}
}

/* The bytes of k that hash and compare: the 8 of its header and the
 * address's, in whole 64-bit words (the rest is zero). */
static size_t key_bytes(const struct flow_key *k)
{
	size_t n = k->family == AF_UNIX ? k->port : 16;
	return 8 + ((n + 7) & ~(size_t)7);
}

/* A multiply-xorshift mix over the key's 64-bit words, keyed by the seed. */
static uint32_t key_hash(const struct flow_table *t, const struct flow_key *k)
{
	size_t words = key_bytes(k) / 8;
	uint64_t h = t->seed;
	for (size_t i = 0; i < words; i++) {
		uint64_t w;
		memcpy(&w, (const uint8_t *)k + 8 * i, sizeof(w));
		h ^= w;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h & t->mask;
}

_Static_assert(offsetof(struct flow_key, addr) == 8 &&
	       sizeof(struct flow_key) == 8 + 8 * FLOW_ADDR_WORDS,
	       "flow_key is hashed as a header word and address words");

struct flow *flow_lookup(struct flow_table *t, const struct flow_key *k)
{
	for (int32_t i = t->buckets[key_hash(t, k)]; i >= 0; i = t->flows[i].hnext)
		if (memcmp(&t->flows[i].key, k, key_bytes(k)) == 0)
			return &t->flows[i];
	return NULL;
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
	list_append(&t->lru, &f->lru_link);
	list_append(&t->idle, &f->idle_link);
	t->active++;
	return f;
}

void flow_touch(struct flow_table *t, struct flow *f, int64_t now_ns)
{
	f->last_ns = now_ns;
	list_move_tail(&t->lru, &f->lru_link);
	if (!f->pending)
		list_move_tail(&t->idle, &f->idle_link);
	else
		list_remove(&t->idle, &f->idle_link);
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
	if (t->idle.head)
		return container_of(t->idle.head, struct flow, idle_link);
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
	list_remove(&t->lru, &f->lru_link);
	list_remove(&t->idle, &f->idle_link);
	f->used = 0;
	f->fd = -1;
	f->hnext = t->free_head;
	t->free_head = i;
	t->active--;
}

/* The flow on the LRU list at n, NULL past its ends. */
static struct flow *lru_flow(struct list_link *n)
{
	return n ? container_of(n, struct flow, lru_link) : NULL;
}

struct flow *flow_oldest(struct flow_table *t)
{
	return lru_flow(t->lru.head);
}

struct flow *flow_younger(const struct flow *f)
{
	return lru_flow(f->lru_link.next);
}

int flow_full(const struct flow_table *t)
{
	return t->free_head < 0;
}
