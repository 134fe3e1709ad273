/* track: a bitmap over sequence numbers; counters read by the progress
 * display from another thread, so they are stored with relaxed atomics. */
#include "track.h"

#include <errno.h>
#include <stdlib.h>

#define BUMP(p)	__atomic_store_n((p), *(p) + 1, __ATOMIC_RELAXED)

int track_init(struct track *t, uint64_t count)
{
	*t = (struct track){ .count = count };
	t->bits = calloc(count / 64 + 1, sizeof(uint64_t));
	if (!t->bits) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void track_free(struct track *t)
{
	free(t->bits);
	t->bits = NULL;
}

enum track_verdict track_reply(struct track *t, uint64_t seq, bool late)
{
	if (seq >= t->count) {
		BUMP(&t->foreign);
		return TRACK_FOREIGN;
	}
	uint64_t mask = 1ULL << (seq % 64);
	if (t->bits[seq / 64] & mask) {
		BUMP(&t->duplicated);
		return TRACK_DUPLICATE;
	}
	t->bits[seq / 64] |= mask;
	BUMP(&t->received);
	if (seq + 1 < t->highest)
		BUMP(&t->reordered);
	else
		t->highest = seq + 1;
	if (late)
		BUMP(&t->late);
	return TRACK_NEW;
}

void track_foreign(struct track *t)
{
	BUMP(&t->foreign);
}

uint64_t track_lost(const struct track *t, uint64_t sent)
{
	return sent > t->received ? sent - t->received : 0;
}
