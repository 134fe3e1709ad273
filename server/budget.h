/*
 * budget: how much of its CPU a SCHED_FIFO loop may take before it counts
 * as overloaded and drops to SCHED_OTHER.
 *
 * A real-time loop that always has work never lets the ordinary tasks on
 * its CPU run (RT throttling leaves them 5 %). When one of those tasks is
 * where the relay's traffic goes (an upstream or a sink on the same CPU),
 * the relay starves its own output and forwards a small fraction of what it
 * could: receive livelock. sched_yield() does not help (it yields to
 * real-time tasks only), and a fixed duty cycle either wastes the CPU when
 * nobody else wants it or starves whoever needs more than it leaves.
 *
 * So the loop keeps SCHED_FIFO while it is busy for at most pct % of each
 * window. Busier than that for several windows in a row (a burst is not an
 * overload), it runs SCHED_OTHER for the next window and
 * shares the CPU fairly with whatever else runs there; the kernel sheds
 * what it cannot take at its own socket, which costs the sender's CPU, not
 * this one. It gets SCHED_FIFO back when it is no longer that busy, or when
 * nobody else wanted its CPU during a window (its own run delay, from
 * /proc/thread-self/schedstat, stayed near zero): on a dedicated CPU it
 * loses nothing.
 */
#ifndef RELAY_BUDGET_H
#define RELAY_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/* The window busy time is measured over. */
#define BUDGET_WINDOW_NS	10000000LL

struct budget {
	int pct;		/* busy share allowed at SCHED_FIFO; 100: no limit */
	int prio;		/* the SCHED_FIFO priority to return to */
	bool demoted;		/* running SCHED_OTHER for being overloaded */
	int over;		/* windows in a row over budget */
	int schedstat_fd;	/* /proc/thread-self/schedstat, -1: none */
	int64_t win_start, idle0, delay0;
};

/* Start accounting for the calling loop thread, which runs SCHED_FIFO at
 * prio now. */
void budget_init(struct budget *b, int pct, int prio, int64_t now,
		 int64_t idle_ns);

/* Called from the loop's tick: at the end of a window, change the thread's
 * policy if the rules above say so. idle_ns: the loop's total time blocked
 * waiting for events (CLOCK_MONOTONIC). Returns 1 when it dropped to
 * SCHED_OTHER, -1 when it got SCHED_FIFO back, 0 otherwise. */
int budget_check(struct budget *b, int64_t now, int64_t idle_ns);

/* Release the file budget_init opened. */
void budget_free(struct budget *b);

#endif
