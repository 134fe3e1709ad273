/*
 * slow: the datagrams of a run that were slower than a limit, each with its
 * intended send time and its reply's arrival on CLOCK_MONOTONIC, the clock
 * of a kernel trace (trace_clock mono), so that a trace of the run can say
 * what held each one (loadgen --list-over-us). A thread keeps its own
 * bounded list; the run's is theirs merged in intended order.
 */
#ifndef LOADGEN_SLOW_H
#define LOADGEN_SLOW_H

#include <stddef.h>
#include <stdint.h>

#define SLOW_MAX 10000		/* datagrams listed in a run, all threads */

struct slow_one {
	int64_t intended_ns, reply_ns;
};

struct slow {
	struct slow_one *v;
	size_t n, cap;
	uint64_t dropped;	/* slower than the limit, but no room left */
};

/* Room for cap datagrams (0: a list that takes none). Returns 0, or -1
 * (ENOMEM). */
int slow_init(struct slow *l, size_t cap);

/* One datagram slower than the limit: listed, or counted as dropped when
 * the list is full. */
void slow_add(struct slow *l, int64_t intended_ns, int64_t reply_ns);

/* Append from's datagrams and its dropped count to into, whose room must
 * hold them (slow_init with the threads' caps added up), then keep into
 * in intended order. */
void slow_merge(struct slow *into, const struct slow *from);

void slow_free(struct slow *l);

#endif
