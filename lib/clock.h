/*
 * clock: nanosecond timestamps as plain integers, so intervals are a
 * subtraction. All but clock_ns_ts are inline: the relay's loops use them
 * per datagram and per stream read.
 */
#ifndef RELAY_CLOCK_H
#define RELAY_CLOCK_H

#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/* ts in nanoseconds. */
static inline int64_t clock_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* The time of clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) in ns. */
static inline int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return clock_ts_ns(&ts);
}

/* ns as a timespec (for clock_nanosleep and timerfd). */
struct timespec clock_ns_ts(int64_t ns);

/* The first slot of the grid next + k * period (period > 0) that lies
 * after now; next itself when it is not yet past. For a periodic loop
 * that skips the wake-ups it missed rather than bursting through them. */
static inline int64_t clock_next_slot(int64_t next, int64_t now, int64_t period)
{
	if (next < now)
		next += ((now - next) / period + 1) * period;
	return next;
}

/* The kernel's receive time (SO_TIMESTAMPNS) that control message c
 * carries, in CLOCK_REALTIME ns; 0 when c is another kind. For a loop
 * that reads several kinds in one walk over a message's control data. */
static inline int64_t clock_cmsg_ns(const struct cmsghdr *c)
{
	struct timespec ts;
	if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
		return 0;
	memcpy(&ts, CMSG_DATA(c), sizeof(ts));
	return clock_ts_ns(&ts);
}

/* The kernel's receive time (SO_TIMESTAMPNS) of a message recvmsg filled,
 * in CLOCK_REALTIME ns; 0 when m carries none. */
static inline int64_t clock_rx_stamp_ns(struct msghdr *m)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		int64_t ns = clock_cmsg_ns(c);
		if (ns)
			return ns;
	}
	return 0;
}

#endif
