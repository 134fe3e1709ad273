/* slow: the bounded list of a run's slow datagrams. */
#include "slow.h"

#include <stdlib.h>
#include <string.h>

int slow_init(struct slow *l, size_t cap)
{
	memset(l, 0, sizeof(*l));
	if (!cap)
		return 0;
	l->v = malloc(cap * sizeof(*l->v));
	if (!l->v)
		return -1;
	l->cap = cap;
	return 0;
}

void slow_add(struct slow *l, int64_t intended_ns, int64_t reply_ns)
{
	if (l->n == l->cap) {
		l->dropped++;
		return;
	}
	l->v[l->n++] = (struct slow_one){ intended_ns, reply_ns };
}

static int by_intended(const void *a, const void *b)
{
	const struct slow_one *x = a, *y = b;
	return (x->intended_ns > y->intended_ns) - (x->intended_ns < y->intended_ns);
}

void slow_merge(struct slow *into, const struct slow *from)
{
	size_t room = into->cap - into->n;
	size_t n = from->n < room ? from->n : room;
	if (n)
		memcpy(into->v + into->n, from->v, n * sizeof(*from->v));
	into->n += n;
	into->dropped += from->dropped + (from->n - n);
	if (into->n)
		qsort(into->v, into->n, sizeof(*into->v), by_intended);
}

void slow_free(struct slow *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
