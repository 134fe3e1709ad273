/*
 * flow: the table of client flows of one loop thread. A flow is a client's
 * 4-tuple (its address and port, and the listener it came in on; for an
 * AF_UNIX client, the name its socket is bound to); it owns
 * one upstream socket (the caller's to open and close). Slots are allocated
 * once at init, so nothing here allocates on the packet path. Flows sit on
 * an LRU list by last activity, whose head expiry looks at; the flows not
 * waiting for a reply are also on a second list of their own, whose head
 * is the first to go when a new client needs room (flow_victim).
 */
#ifndef RELAY_FLOW_H
#define RELAY_FLOW_H

#include <netinet/in.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "list.h"
#include "loop.h"

/* The size of the key's address: an AF_UNIX name (sun_path) is the
 * longest; IP keys use the first 16 bytes and are hashed and compared on
 * those alone. */
#define FLOW_ADDR_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)
#define FLOW_ADDR_WORDS	((FLOW_ADDR_MAX + 7) / 8)

struct flow_key {
	uint8_t family;		/* AF_INET, AF_INET6 or AF_UNIX */
	uint8_t listener;	/* the loop's listener slot */
	uint16_t port;		/* network order; AF_UNIX: the name's length */
	uint32_t scope;
	uint8_t addr[8 * FLOW_ADDR_WORDS];	/* zero past what is used */
};

struct flow {
	struct loop_handler handler;	/* the upstream socket's */
	struct flow_key key;
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
		struct sockaddr_un un;
	} client;
	socklen_t client_len;
	struct in6_addr local;	/* the address the client sent to, when the
				 * listener is a wildcard (has_local) */
	uint8_t has_local;
	uint8_t upstream;	/* its upstream's slot in the loop's stats */
	uint8_t refused;	/* the upstream answered ICMP unreachable */
	uint8_t reply_fails;	/* replies in a row not delivered (udp.h) */
	int upstream_id;	/* which upstream (udp.h) the socket is for */
	int fd;			/* upstream socket, -1 for echo or unused */
	uint32_t pending;	/* requests sent minus replies seen */
	int64_t last_ns;	/* last activity, CLOCK_MONOTONIC */
	int32_t hnext;		/* hash chain, or free list */
	struct list_link lru_link;	/* LRU list */
	struct list_link idle_link;	/* idle list (pending == 0) */
	uint8_t used;
	struct flow_table *table;	/* the one it is in: its socket's
					 * handler finds its owner by it */
};

struct flow_table {
	struct flow *flows;
	int32_t cap;
	int32_t active;
	int32_t *buckets;
	uint32_t mask;
	struct list lru;		/* every flow, by last activity */
	struct list idle;		/* those waiting for no reply */
	int32_t free_head;
	uint64_t seed;		/* random: clients choose their own keys */
};

/* Allocate cap slots. Returns 0, or -1 with errno ENOMEM/EINVAL. */
int flow_table_init(struct flow_table *t, int cap);
void flow_table_free(struct flow_table *t);

/* Build the key of a client address of len bytes received on listener
 * slot. */
void flow_key_make(struct flow_key *k, const struct sockaddr *sa,
		   socklen_t len, int listener);

/* The flow with key k, or NULL. */
struct flow *flow_lookup(struct flow_table *t, const struct flow_key *k);

/* Add a flow for k (caller checked it is absent) as the newest, nothing
 * pending. Returns NULL when the table is full: evict flow_victim() first. */
struct flow *flow_insert(struct flow_table *t, const struct flow_key *k,
			 const struct sockaddr *client, socklen_t len,
			 int64_t now_ns);

/* Mark f active now (moves it to the young end), on the idle list or off
 * it as f->pending now says. */
void flow_touch(struct flow_table *t, struct flow *f, int64_t now_ns);

/* f sent n requests upstream now (n = 0: echo, nothing to wait for). */
void flow_sent(struct flow_table *t, struct flow *f, uint32_t n,
	       int64_t now_ns);

/* n replies (or an ICMP error) came back for f now. */
void flow_answered(struct flow_table *t, struct flow *f, uint32_t n,
		   int64_t now_ns);

/* The flow to close for a new client when the table is full: the one idle
 * longest of those not waiting for a reply; failing that, the least
 * recently active if that was wait_ns ago or more (its replies are taken
 * for lost). NULL when every flow waits for a reply and was active within
 * wait_ns: the new client is the one to turn away. */
struct flow *flow_victim(struct flow_table *t, int64_t now_ns,
			 int64_t wait_ns);

/* Remove f; its slot is free again. */
void flow_remove(struct flow_table *t, struct flow *f);

/* The least recently active flow, or NULL when empty. */
struct flow *flow_oldest(struct flow_table *t);

/* The next younger flow after f (NULL at the end): to walk all flows. */
struct flow *flow_younger(const struct flow *f);

/* 1 when no slot is free. */
int flow_full(const struct flow_table *t);

#endif
