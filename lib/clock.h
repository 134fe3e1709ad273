/*
 * clock: nanosecond timestamps as plain integers, so intervals are a
 * subtraction.
 */
#ifndef RELAY_CLOCK_H
#define RELAY_CLOCK_H

#include <stdint.h>
#include <time.h>

/* ts in nanoseconds. */
int64_t clock_ts_ns(const struct timespec *ts);

/* The time of clock id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) in ns. */
int64_t clock_ns(clockid_t id);

#endif
