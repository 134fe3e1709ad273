/*
 * wire: what a loadgen datagram carries, so that a reply (the datagram
 * echoed back) says by itself which packet it answers and when that packet
 * was meant to go and did go.
 *
 * Layout, little-endian, at the start of the payload (the rest is zeros):
 *   0  u32 magic "LGN1"
 *   4  u32 run id (random per run: replies from another run are foreign)
 *   8  u32 thread index
 *  12  u32 reserved (0)
 *  16  u64 sequence number within the thread (WIRE_PROBE: a probe)
 *  24  i64 intended send time, CLOCK_MONOTONIC ns
 *  32  i64 actual send time, CLOCK_MONOTONIC ns
 */
#ifndef LOADGEN_WIRE_H
#define LOADGEN_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WIRE_HDR_LEN	40
#define WIRE_MAX_LEN	65507		/* largest UDP payload over IPv4 */
#define WIRE_PROBE	UINT64_MAX	/* sequence number of a probe */

struct wire {
	uint32_t run_id;
	uint32_t thread;
	uint64_t seq;
	int64_t intended_ns;
	int64_t sent_ns;
};

/* Write the header of w into buf (at least WIRE_HDR_LEN bytes). */
void wire_encode(const struct wire *w, void *buf);

/* Read a reply of len bytes. Returns true when it is one of run_id's
 * datagrams (magic, length and run id match), filling w. */
bool wire_decode(const void *buf, size_t len, uint32_t run_id, struct wire *w);

#endif
