/*
 * beat: read the relay's heartbeat file (server/heartbeat.h) without
 * disturbing the relay: a shared read-only mapping, no system call per read.
 */
#ifndef DEMO_BEAT_H
#define DEMO_BEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct beat {
	const void *map;
	size_t len;
};

/* Map path. Returns 0, or -1 with err filled (missing, too short, not a
 * relay heartbeat). */
int beat_open(struct beat *b, const char *path, char *err, size_t errlen);

/* The relay's progress counter and the CLOCK_MONOTONIC time (ns) of its
 * last update. */
void beat_read(const struct beat *b, uint64_t *progress, int64_t *mono_ns);

/* The thread id of the loop that made progress least recently (the one a
 * stall is about). */
int beat_oldest_tid(const struct beat *b);

/* The relay's CLOCK_MONOTONIC at start-up (ns): the zero of its time
 * series. */
int64_t beat_start_ns(const struct beat *b);

void beat_close(struct beat *b);

#endif
