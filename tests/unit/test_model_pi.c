/* Unit test for lab/model's lock kinds under real-time priorities: an RT
 * waiter on the pi_mutex boosts the SCHED_OTHER holder (what lets a throttled
 * producer finish); on the plain mutex the holder keeps its priority. Needs
 * SCHED_FIFO: skipped where the kernel refuses it. */
#include "check.h"
#include "rt.h"
#include "../../lab/model/rlock.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAITER_PRIO 10

struct pair {
	struct rlock lock;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool held, release;
	atomic_int holder_tid, waiter_tid;
	atomic_int waiter_status;	/* 0 running, 1 got the lock, -1 no RT */
	char why[256];
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Field n (1-based, as proc(5) counts) of /proc/self/task/<tid>/stat, or
 * -1000 when it cannot be read; *state gets field 3. */
static long stat_field(pid_t tid, int n, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1000;
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = 0;
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1000;
	*state = p[2];
	p += 2;		/* field 3 */
	for (int i = 3; i < n; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -1000;
		p++;
	}
	return strtol(p, NULL, 10);
}

static void *holder(void *arg)
{
	struct pair *pr = arg;
	atomic_store(&pr->holder_tid, (int)syscall(SYS_gettid));
	rlock_lock_shared(&pr->lock);
	pthread_mutex_lock(&pr->mu);
	pr->held = true;
	pthread_cond_broadcast(&pr->cv);
	while (!pr->release)
		pthread_cond_wait(&pr->cv, &pr->mu);
	pthread_mutex_unlock(&pr->mu);
	rlock_unlock(&pr->lock);
	return NULL;
}

static void *waiter(void *arg)
{
	struct pair *pr = arg;
	atomic_store(&pr->waiter_tid, (int)syscall(SYS_gettid));
	if (rt_set_fifo(WAITER_PRIO, pr->why, sizeof(pr->why)) != 0) {
		atomic_store(&pr->waiter_status, -1);
		return NULL;
	}
	if (rlock_lock_excl(&pr->lock) == 0) {
		rlock_unlock(&pr->lock);
		atomic_store(&pr->waiter_status, 1);
	}
	return NULL;
}

/* The holder's priority (proc(5) field 18) while the RT waiter is blocked:
 * -1 - WAITER_PRIO when boosted, 20 + nice for SCHED_OTHER. */
static long holder_prio_while_waited(enum rlock_kind kind)
{
	struct pair pr;
	memset(&pr, 0, sizeof(pr));
	CHECK(rlock_init(&pr.lock, kind) == 0);
	pthread_mutex_init(&pr.mu, NULL);
	pthread_cond_init(&pr.cv, NULL);

	pthread_t h, w;
	pthread_create(&h, NULL, holder, &pr);
	pthread_mutex_lock(&pr.mu);
	while (!pr.held)
		pthread_cond_wait(&pr.cv, &pr.mu);
	pthread_mutex_unlock(&pr.mu);
	pthread_create(&w, NULL, waiter, &pr);

	long prio = -1000;
	char state = '?';
	for (int i = 0; i < 200 && atomic_load(&pr.waiter_status) == 0; i++) {
		pid_t wt = atomic_load(&pr.waiter_tid);
		if (wt && stat_field(wt, 3, &state) != -1000 && state == 'S') {
			prio = stat_field(atomic_load(&pr.holder_tid), 18, &state);
			break;
		}
		sleep_ms(10);
	}
	pthread_mutex_lock(&pr.mu);
	pr.release = true;
	pthread_cond_broadcast(&pr.cv);
	pthread_mutex_unlock(&pr.mu);
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	if (atomic_load(&pr.waiter_status) < 0)
		CHECK_SKIP(pr.why);
	CHECK_EQ_INT(atomic_load(&pr.waiter_status), 1);
	rlock_destroy(&pr.lock);
	return prio;
}

int main(void)
{
	/* The holder inherits the nice value this test was started with. */
	errno = 0;
	long other = 20 + getpriority(PRIO_PROCESS, 0);
	CHECK(errno == 0);
	CHECK_EQ_INT(holder_prio_while_waited(RLOCK_PI_MUTEX), -1 - WAITER_PRIO);
	CHECK_EQ_INT(holder_prio_while_waited(RLOCK_MUTEX), other);
	CHECK_EQ_INT(holder_prio_while_waited(RLOCK_RWLOCK), other);
	return check_done();
}
