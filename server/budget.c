/*
 * budget: SCHED_FIFO while the loop keeps up, SCHED_OTHER while it cannot
 * (see budget.h for why).
 */
#include "budget.h"
#include "proc.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* Below this share of the window spent waiting for its CPU, nobody else
 * wanted it: SCHED_OTHER bought nothing, so SCHED_FIFO comes back. */
#define IDLE_CPU_PCT	2
/* Windows in a row over budget before the loop counts as overloaded: a
 * burst (a reload, a flood of new flows) is not an overload. */
#define OVER_WINDOWS	5

/* The thread's run delay so far (ns waiting on a run queue), -1 unknown. */
static int64_t run_delay(const struct budget *b)
{
	char buf[96];
	if (b->schedstat_fd < 0)
		return -1;
	ssize_t n = pread(b->schedstat_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return proc_schedstat_delay(buf);
}

/* delay: the run delay at now (the wait a change of policy caused at once
 * belongs to the window it starts). */
static void start_window(struct budget *b, int64_t now, int64_t idle_ns,
			 int64_t delay)
{
	b->win_start = now;
	b->idle0 = idle_ns;
	b->delay0 = delay;
}

void budget_init(struct budget *b, int pct, int prio, int64_t now,
		 int64_t idle_ns)
{
	b->pct = pct;
	b->prio = prio;
	b->demoted = false;
	b->over = 0;
	b->schedstat_fd = open("/proc/thread-self/schedstat",
			       O_RDONLY | O_CLOEXEC);
	start_window(b, now, idle_ns, -1);
}

void budget_free(struct budget *b)
{
	if (b->schedstat_fd >= 0)
		close(b->schedstat_fd);
	b->schedstat_fd = -1;
}

static int set_policy(struct budget *b, bool fifo)
{
	struct sched_param sp = { .sched_priority = fifo ? b->prio : 0 };
	return pthread_setschedparam(pthread_self(),
				     fifo ? SCHED_FIFO : SCHED_OTHER, &sp);
}

int budget_check(struct budget *b, int64_t now, int64_t idle_ns)
{
	int64_t span = now - b->win_start;
	if (b->pct >= 100 || span < BUDGET_WINDOW_NS)
		return 0;
	int64_t busy = span - (idle_ns - b->idle0);
	bool over = busy * 100 > span * b->pct;
	int64_t delay = run_delay(b);
	int change = 0;
	b->over = over ? b->over + 1 : 0;
	if (!b->demoted && b->over >= OVER_WINDOWS) {
		if (set_policy(b, false) == 0) {
			b->demoted = true;
			change = 1;
		}
	} else if (b->demoted) {
		bool alone = b->delay0 >= 0 && delay >= 0 &&
			     (delay - b->delay0) * 100 < span * IDLE_CPU_PCT;
		if ((!over || alone) && set_policy(b, true) == 0) {
			b->demoted = false;
			b->over = 0;
			change = -1;
		} else if (!over || alone) {
			b->pct = 100;	/* the privilege is gone: stay */
		}
	}
	start_window(b, now, idle_ns, delay);
	return change;
}
