/*
 * track: which of a thread's packets came back, to count lost, duplicated,
 * reordered and late replies exactly (one bit per packet sent).
 */
#ifndef LOADGEN_TRACK_H
#define LOADGEN_TRACK_H

#include <stdbool.h>
#include <stdint.h>

struct track {
	uint64_t *bits;		/* bit i: a reply to packet i came */
	uint64_t count;		/* packets the thread will send */
	uint64_t highest;	/* highest sequence number answered + 1 */
	uint64_t received;	/* distinct packets answered */
	uint64_t duplicated;	/* replies to a packet already answered */
	uint64_t reordered;	/* replies behind a later packet's reply */
	uint64_t late;		/* replies after the reply timeout */
	uint64_t foreign;	/* replies that are not ours (or out of range) */
};

enum track_verdict { TRACK_NEW, TRACK_DUPLICATE, TRACK_FOREIGN };

/* Prepare t for count packets. Returns 0, or -1 (ENOMEM). */
int track_init(struct track *t, uint64_t count);
void track_free(struct track *t);

/* Account a reply to packet seq whose latency is late (beyond the timeout)
 * or not. Only TRACK_NEW replies go into the latency histograms. */
enum track_verdict track_reply(struct track *t, uint64_t seq, bool late);

/* Count a datagram that is not a reply to this run. */
void track_foreign(struct track *t);

/* Packets sent but never answered. */
uint64_t track_lost(const struct track *t, uint64_t sent);

#endif
