/* Unit tests for server/flow: lookup by 4-tuple (v4, v6, listener) and by
 * AF_UNIX name (path, abstract, bytes after a NUL), LRU
 * order under touch, expiry from the old end, eviction when full, slot
 * reuse, and a randomized run against a simple model. */
#include "check.h"
#include "flow.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static struct sockaddr_in v4(const char *ip, int port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_port = htons(port) };
	inet_pton(AF_INET, ip, &s.sin_addr);
	return s;
}

/* An AF_UNIX name of n bytes, as recvmmsg gives it (with its length). */
struct un {
	struct sockaddr_un sa;
	socklen_t len;
};

static struct un un(const char *name, size_t n)
{
	struct un u = { .sa.sun_family = AF_UNIX };
	memcpy(u.sa.sun_path, name, n);
	u.len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	return u;
}

static socklen_t ip_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

static struct flow *add_len(struct flow_table *t, const struct sockaddr *sa,
			    socklen_t len, int listener, int64_t now)
{
	struct flow_key k;
	flow_key_make(&k, sa, len, listener);
	CHECK(flow_lookup(t, &k) == NULL);
	return flow_insert(t, &k, sa, len, now);
}

static struct flow *find_len(struct flow_table *t, const struct sockaddr *sa,
			     socklen_t len, int listener)
{
	struct flow_key k;
	flow_key_make(&k, sa, len, listener);
	return flow_lookup(t, &k);
}

static struct flow *add(struct flow_table *t, const struct sockaddr *sa,
			int listener, int64_t now)
{
	return add_len(t, sa, ip_len(sa), listener, now);
}

static struct flow *find(struct flow_table *t, const struct sockaddr *sa,
			 int listener)
{
	return find_len(t, sa, ip_len(sa), listener);
}

static void test_keys(void)
{
	struct flow_table t;
	CHECK(flow_table_init(&t, 8) == 0);
	struct sockaddr_in a = v4("10.0.0.1", 1000), b = v4("10.0.0.1", 1001);
	struct sockaddr_in6 c = { .sin6_family = AF_INET6, .sin6_port = htons(1000) };
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &c.sin6_addr);
	struct flow *fa = add(&t, (struct sockaddr *)&a, 0, 1);
	struct flow *fb = add(&t, (struct sockaddr *)&b, 0, 2);
	struct flow *fa1 = add(&t, (struct sockaddr *)&a, 1, 3);
	struct flow *fc = add(&t, (struct sockaddr *)&c, 0, 4);
	CHECK(fa && fb && fa1 && fc);
	CHECK(fa != fb && fa != fa1 && fa != fc);
	CHECK(fa->table == &t && fc->table == &t);
	CHECK(find(&t, (struct sockaddr *)&a, 0) == fa);
	CHECK(find(&t, (struct sockaddr *)&a, 1) == fa1);
	CHECK(find(&t, (struct sockaddr *)&b, 0) == fb);
	CHECK(find(&t, (struct sockaddr *)&c, 0) == fc);
	CHECK(find(&t, (struct sockaddr *)&c, 1) == NULL);
	CHECK_EQ_INT(t.active, 4);
	CHECK_EQ_INT(fa->fd, -1);
	CHECK(memcmp(&fc->client.in6, &c, sizeof(c)) == 0);
	flow_table_free(&t);
}

/* AF_UNIX clients are told apart by every byte of their name and its
 * length: a path and its prefix, an abstract name and the path of the same
 * letters, names that differ after a NUL, the longest name there is. */
static void test_unix_keys(void)
{
	struct flow_table t;
	CHECK(flow_table_init(&t, 16) == 0);
	char longest[sizeof(((struct sockaddr_un *)0)->sun_path)];
	memset(longest, 'x', sizeof(longest));
	longest[0] = '/';
	struct un n[] = {
		un("/run/a", 7), un("/run/ab", 8), un("\0run/a", 7),
		un("\0a\0b", 4), un("\0a\0c", 4), un("\0a", 2),
		un(longest, sizeof(longest)), un("\0" "7f181", 6),
	};
	enum { N = sizeof(n) / sizeof(n[0]) };
	struct flow *f[N];
	for (int i = 0; i < N; i++) {
		f[i] = add_len(&t, (struct sockaddr *)&n[i].sa, n[i].len, 0, i);
		CHECK(f[i] != NULL);
	}
	for (int i = 0; i < N; i++) {
		CHECK(find_len(&t, (struct sockaddr *)&n[i].sa, n[i].len, 0) ==
		      f[i]);
		CHECK(find_len(&t, (struct sockaddr *)&n[i].sa, n[i].len, 1) ==
		      NULL);
		CHECK_EQ_INT(f[i]->client_len, n[i].len);
		CHECK(memcmp(&f[i]->client.un, &n[i].sa, n[i].len) == 0);
	}
	/* An IPv4 client whose bytes spell a name is another client. */
	struct sockaddr_in a = v4("47.114.117.110", 0x2f61);
	CHECK(find(&t, (struct sockaddr *)&a, 0) == NULL);
	CHECK_EQ_INT(t.active, N);
	flow_table_free(&t);
}

static void test_lru_and_eviction(void)
{
	struct flow_table t;
	CHECK(flow_table_init(&t, 3) == 0);
	struct sockaddr_in s[4];
	struct flow *f[4];
	for (int i = 0; i < 3; i++) {
		s[i] = v4("192.0.2.1", 2000 + i);
		f[i] = add(&t, (struct sockaddr *)&s[i], 0, 10 + i);
	}
	CHECK(flow_full(&t));
	CHECK(flow_oldest(&t) == f[0]);
	flow_touch(&t, f[0], 20);		/* f1 is now the oldest */
	CHECK(flow_oldest(&t) == f[1]);
	CHECK(flow_younger(f[1]) == f[2]);
	CHECK(flow_younger(f[2]) == f[0]);
	CHECK(flow_younger(f[0]) == NULL);
	s[3] = v4("192.0.2.1", 3000);
	struct flow_key k;
	flow_key_make(&k, (struct sockaddr *)&s[3], sizeof(s[3]), 0);
	CHECK(flow_insert(&t, &k, (struct sockaddr *)&s[3], sizeof(s[3]), 30) == NULL);
	flow_remove(&t, flow_oldest(&t));	/* evict f1 */
	CHECK(find(&t, (struct sockaddr *)&s[1], 0) == NULL);
	f[3] = flow_insert(&t, &k, (struct sockaddr *)&s[3], sizeof(s[3]), 30);
	CHECK(f[3] != NULL);
	CHECK(flow_oldest(&t) == f[2]);
	CHECK(find(&t, (struct sockaddr *)&s[3], 0) == f[3]);
	CHECK_EQ_INT(t.active, 3);
	/* Expiry walks from the old end: f2 (12) then f0 (20). */
	int64_t idle = 15, now = 32;
	int expired = 0;
	struct flow *o;
	while ((o = flow_oldest(&t)) && now - o->last_ns >= idle) {
		flow_remove(&t, o);
		expired++;
	}
	CHECK_EQ_INT(expired, 1);
	CHECK(flow_oldest(&t) == f[0]);
	flow_table_free(&t);
}

/* A full table makes room with a flow not waiting for a reply, else with
 * one whose reply is overdue, else not at all. */
static void test_victim(void)
{
	struct flow_table t;
	CHECK(flow_table_init(&t, 3) == 0);
	struct sockaddr_in s[3];
	struct flow *f[3];
	for (int i = 0; i < 3; i++) {
		s[i] = v4("192.0.2.2", 4000 + i);
		f[i] = add(&t, (struct sockaddr *)&s[i], 0, 10 + i);
		flow_sent(&t, f[i], 1, 10 + i);
	}
	/* all wait, the oldest for 90 of the 100 allowed */
	CHECK(flow_victim(&t, 100, 100) == NULL);
	CHECK(flow_victim(&t, 110, 100) == f[0]);	/* overdue */
	/* f2's reply came: idle, so it goes first though most recent */
	flow_answered(&t, f[2], 1, 50);
	CHECK(flow_victim(&t, 60, 100) == f[2]);
	CHECK(flow_oldest(&t) == f[0]);
	/* f1 too, later: the one idle longest goes first */
	flow_answered(&t, f[1], 1, 55);
	CHECK(flow_victim(&t, 60, 100) == f[2]);
	/* a new request takes f2 off the idle list */
	flow_sent(&t, f[2], 1, 58);
	CHECK(flow_victim(&t, 60, 100) == f[1]);
	flow_remove(&t, f[1]);
	CHECK(flow_victim(&t, 60, 100) == NULL);
	/* echo flows never wait */
	f[1] = add(&t, (struct sockaddr *)&s[1], 0, 61);
	flow_sent(&t, f[1], 0, 61);
	CHECK(flow_victim(&t, 62, 100) == f[1]);
	/* more replies than requests (duplicates) do not wrap */
	flow_answered(&t, f[0], 5, 63);
	CHECK_EQ_INT((int)f[0]->pending, 0);
	flow_table_free(&t);
}

/* Random inserts, touches and removals against a plain array model. */
static void test_random(void)
{
	enum { CAP = 64, KEYS = 200, OPS = 200000 };
	struct flow_table t;
	CHECK(flow_table_init(&t, CAP) == 0);
	struct flow *model[KEYS] = { 0 };
	int live = 0, bad = 0;
	srand(7);
	for (int op = 0; op < OPS; op++) {
		int key = rand() % KEYS;
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
					   .sin6_port = htons(key) };
		sa.sin6_addr.s6_addr[15] = (uint8_t)(key * 7);
		struct flow *f = find(&t, (struct sockaddr *)&sa, key % 3);
		if (f != model[key])
			bad++;
		if (!f) {
			if (flow_full(&t)) {
				struct flow *o = flow_oldest(&t);
				for (int i = 0; i < KEYS; i++)
					if (model[i] == o)
						model[i] = NULL;
				flow_remove(&t, o);
				live--;
			}
			model[key] = add(&t, (struct sockaddr *)&sa, key % 3, op);
			live++;
		} else if (rand() % 4 == 0) {
			flow_remove(&t, f);
			model[key] = NULL;
			live--;
		} else {
			flow_touch(&t, f, op);
		}
		if (t.active != live)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	/* The LRU list holds every live flow, oldest first. */
	int n = 0;
	int64_t last = -1;
	for (struct flow *f = flow_oldest(&t); f; f = flow_younger(f)) {
		CHECK(f->last_ns >= last);
		last = f->last_ns;
		n++;
	}
	CHECK_EQ_INT(n, live);
	flow_table_free(&t);
}

int main(void)
{
	struct flow_table t;
	CHECK(flow_table_init(&t, 0) == -1);
	test_keys();
	test_unix_keys();
	test_lru_and_eviction();
	test_victim();
	test_random();
	return check_done();
}
