/*
 * rlock: the lock that guards the model's ready list, in the three kinds
 * the model compares. Producers (ep_poll_callback's role) take it shared, the
 * consumer (ep_poll's role) takes it exclusive.
 *
 *   rwlock    writer-preferring rwlock, readers get no priority inheritance:
 *             the stock PREEMPT_RT kernel's rwlock_t
 *   pi_mutex  PTHREAD_PRIO_INHERIT mutex: what spinlock_t is on PREEMPT_RT,
 *             the lock after the fix (shared and exclusive are the same)
 *   mutex     plain mutex: exclusive like the fix but without PI, the control
 *             that shows PI, not exclusivity, is what removes the waits
 */
#ifndef RELAY_RLOCK_H
#define RELAY_RLOCK_H

#include <pthread.h>

enum rlock_kind { RLOCK_RWLOCK, RLOCK_PI_MUTEX, RLOCK_MUTEX, RLOCK_KINDS };

struct rlock {
	enum rlock_kind kind;
	union {
		pthread_rwlock_t rw;
		pthread_mutex_t mx;
	} u;
};

/* The kind's name as the command line, file names and JSON spell it. */
const char *rlock_name(enum rlock_kind kind);

/* The kind called name. Returns 0, or -1 when no kind has that name. */
int rlock_parse(const char *name, enum rlock_kind *kind);

/* Initialise l as kind. Returns 0 or the pthread error number. */
int rlock_init(struct rlock *l, enum rlock_kind kind);

/* Destroy an unlocked l. */
void rlock_destroy(struct rlock *l);

/* Take l shared (a producer) or exclusive (the consumer), and release it.
 * Each returns 0 or the pthread error number. */
int rlock_lock_shared(struct rlock *l);
int rlock_lock_excl(struct rlock *l);
int rlock_unlock(struct rlock *l);

#endif
