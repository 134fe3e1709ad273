/*
 * heartbeat: progress of the loop threads in a small shared file, for an
 * external watchdog that must see a stall without itself using epoll (an
 * observer that waits in epoll_wait could be caught in the very stall it
 * watches). relay --heartbeat FILE creates FILE with this layout and maps it;
 * a reader mmaps it read-only (or just pread()s it) and checks that mono_ns
 * of each loop keeps advancing against its own CLOCK_MONOTONIC.
 *
 * Layout, native byte order (little-endian on x86), all fields naturally
 * aligned, each loop in its own 64-byte cache line. Each field is written
 * with a single 64-bit store, so a reader never sees one torn, but fields
 * of one loop may be from consecutive updates.
 */
#ifndef RELAY_HEARTBEAT_H
#define RELAY_HEARTBEAT_H

#include <stddef.h>
#include <stdint.h>

#define HEARTBEAT_MAGIC		"RELAYHB1"	/* 8 bytes, no NUL */
#define HEARTBEAT_VERSION	1

struct heartbeat_loop {
	uint64_t seq;		/* +1 on every tick and every batch */
	uint64_t mono_ns;	/* CLOCK_MONOTONIC of that update */
	uint64_t ticks;		/* timer ticks handled */
	uint64_t packets;	/* datagrams received (both directions) */
	int32_t cpu;		/* the CPU the loop is pinned to */
	int32_t pid;		/* the loop thread's id (gettid) */
	uint8_t pad[24];
};

struct heartbeat_file {
	char magic[8];		/* HEARTBEAT_MAGIC */
	uint32_t version;	/* HEARTBEAT_VERSION */
	uint32_t nloops;	/* entries in loop[] */
	uint64_t pid;		/* relay's process id */
	uint64_t start_mono_ns;	/* CLOCK_MONOTONIC at start-up */
	uint8_t pad[32];
	struct heartbeat_loop loop[];
};

_Static_assert(sizeof(struct heartbeat_loop) == 64, "one cache line");
_Static_assert(offsetof(struct heartbeat_file, loop) == 64, "header line");

/* Create path for nloops loops and map it shared; path NULL maps anonymous
 * memory (relay's own watchdog reads it too). The file is made next to path
 * and renamed over it (newfile.h): an old file or symlink there is
 * replaced, never written through. Returns the mapping, or NULL with err
 * filled. */
struct heartbeat_file *heartbeat_open(const char *path, int nloops,
				      int64_t start_ns, char *err,
				      size_t errlen);

/* Publish one update of loop l (the loop thread calls this). */
static inline void heartbeat_beat(struct heartbeat_loop *l, int64_t now_ns,
				  uint64_t ticks, uint64_t packets)
{
	__atomic_store_n(&l->mono_ns, (uint64_t)now_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&l->ticks, ticks, __ATOMIC_RELAXED);
	__atomic_store_n(&l->packets, packets, __ATOMIC_RELAXED);
	__atomic_store_n(&l->seq, __atomic_load_n(&l->seq, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELEASE);
}

/* Unmap it (the file stays for a post-mortem look). */
void heartbeat_close(struct heartbeat_file *hb);

/*
 * The reader side: a watchdog maps the file read-only and reads it without
 * disturbing the relay (no system call per read).
 */
struct heartbeat_map {
	const void *map;
	size_t len;
};

/* Map path. Returns 0, or -1 with err filled (missing, too short, not a
 * relay heartbeat). */
int heartbeat_map_open(struct heartbeat_map *b, const char *path, char *err, size_t errlen);

/* The relay's progress counter and the CLOCK_MONOTONIC time (ns) of its
 * last update. */
void heartbeat_map_read(const struct heartbeat_map *b, uint64_t *progress, int64_t *mono_ns);

/* The thread id of the loop that made progress least recently (the one a
 * stall is about). */
int heartbeat_map_oldest_tid(const struct heartbeat_map *b);

/* The relay's CLOCK_MONOTONIC at start-up (ns): the zero of its time
 * series. */
int64_t heartbeat_map_start_ns(const struct heartbeat_map *b);

void heartbeat_map_close(struct heartbeat_map *b);

#endif
