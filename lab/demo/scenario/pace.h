/*
 * pace: timer deadlines on the other CPUs while the RT ticker's datagram is
 * out, without running anything there. QEMU's TCG runs the vCPUs one at a
 * time, each until the next timer deadline of any of them; a CPU whose own
 * timers are not armed (the ticker's, caught inside its timer interrupt
 * before it re-armed the next one) then waits for another's whole turn.
 * A cpu-clock perf event samples from a hard hrtimer that re-arms itself in
 * the interrupt: a deadline every step on its CPU whatever runs there, and
 * no task woken. It counts; nobody reads its samples.
 */
#ifndef DEMO_PACE_H
#define DEMO_PACE_H

#include <stddef.h>
#include <stdint.h>

#define PACE_MAX_CPUS 64

struct pace {
	int fd[PACE_MAX_CPUS];	/* the events, one per paced CPU */
	int n;			/* how many are open */
};

/* Open a disabled cpu-clock event of period step_ns on every online CPU
 * below PACE_MAX_CPUS but skip_cpu. Returns 0, or -1 with err filled. */
int pace_open(struct pace *p, int skip_cpu, int64_t step_ns, char *err, size_t errlen);

/* Start and stop the events (each an IPI to its CPU); safe on a closed pace. */
void pace_on(struct pace *p);
void pace_off(struct pace *p);

/* How long the events were on, in ns summed over the CPUs (what a
 * cpu-clock event counts); 0 when none counted. */
int64_t pace_total_ns(const struct pace *p);

void pace_close(struct pace *p);

#endif
