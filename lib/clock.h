/*
 * clock: nanosecond timestamps as plain integers, so intervals are a
 * subtraction.
 */
#ifndef RELAY_CLOCK_H
#define RELAY_CLOCK_H

#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

/* ts in nanoseconds. */
int64_t clock_ts_ns(const struct timespec *ts);

/* The time of clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) in ns. */
int64_t clock_ns(clockid_t id);

/* ns as a timespec (for clock_nanosleep and timerfd). */
struct timespec clock_ns_ts(int64_t ns);

/* The kernel's receive time (SO_TIMESTAMPNS) of a message recvmsg filled,
 * in CLOCK_REALTIME ns; 0 when m carries none. */
int64_t clock_rx_stamp_ns(struct msghdr *m);

#endif
