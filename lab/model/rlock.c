/*
 * rlock: three pthread locks behind one shared/exclusive interface.
 */
#include "rlock.h"

#include <errno.h>
#include <string.h>

static const char *const names[RLOCK_KINDS] = {
	[RLOCK_RWLOCK] = "rwlock",
	[RLOCK_PI_MUTEX] = "pi_mutex",
	[RLOCK_MUTEX] = "mutex",
};

const char *rlock_name(enum rlock_kind kind)
{
	return kind < RLOCK_KINDS ? names[kind] : "?";
}

int rlock_parse(const char *name, enum rlock_kind *kind)
{
	for (int k = 0; k < RLOCK_KINDS; k++) {
		if (strcmp(name, names[k]) == 0) {
			*kind = (enum rlock_kind)k;
			return 0;
		}
	}
	return -1;
}

static int init_rwlock(pthread_rwlock_t *rw)
{
	pthread_rwlockattr_t a;
	int e = pthread_rwlockattr_init(&a);
	if (e)
		return e;
	/* The kernel rwlock on RT blocks new readers once a writer waits
	 * (286deb7ec03d); glibc's default prefers readers and would let the
	 * unthrottled producers starve the consumer instead. */
	e = pthread_rwlockattr_setkind_np(&a,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	if (!e)
		e = pthread_rwlock_init(rw, &a);
	pthread_rwlockattr_destroy(&a);
	return e;
}

static int init_mutex(pthread_mutex_t *mx, int protocol)
{
	pthread_mutexattr_t a;
	int e = pthread_mutexattr_init(&a);
	if (e)
		return e;
	e = pthread_mutexattr_setprotocol(&a, protocol);
	if (!e)
		e = pthread_mutex_init(mx, &a);
	pthread_mutexattr_destroy(&a);
	return e;
}

int rlock_init(struct rlock *l, enum rlock_kind kind)
{
	memset(l, 0, sizeof(*l));
	l->kind = kind;
	switch (kind) {
	case RLOCK_RWLOCK:
		return init_rwlock(&l->u.rw);
	case RLOCK_PI_MUTEX:
		return init_mutex(&l->u.mx, PTHREAD_PRIO_INHERIT);
	case RLOCK_MUTEX:
		return init_mutex(&l->u.mx, PTHREAD_PRIO_NONE);
	case RLOCK_KINDS:
		break;
	}
	return EINVAL;
}

void rlock_destroy(struct rlock *l)
{
	if (l->kind == RLOCK_RWLOCK)
		pthread_rwlock_destroy(&l->u.rw);
	else
		pthread_mutex_destroy(&l->u.mx);
}

int rlock_lock_shared(struct rlock *l)
{
	if (l->kind == RLOCK_RWLOCK)
		return pthread_rwlock_rdlock(&l->u.rw);
	return pthread_mutex_lock(&l->u.mx);
}

int rlock_lock_excl(struct rlock *l)
{
	if (l->kind == RLOCK_RWLOCK)
		return pthread_rwlock_wrlock(&l->u.rw);
	return pthread_mutex_lock(&l->u.mx);
}

int rlock_unlock(struct rlock *l)
{
	if (l->kind == RLOCK_RWLOCK)
		return pthread_rwlock_unlock(&l->u.rw);
	return pthread_mutex_unlock(&l->u.mx);
}
