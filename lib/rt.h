/*
 * rt: the real-time set-up of a latency-critical thread, and plain-language
 * reasons when the kernel refuses it.
 */
#ifndef RELAY_RT_H
#define RELAY_RT_H

#include <stddef.h>

/* Lock all current and future memory (mlockall). Returns 0, or -1 with why
 * filled (RLIMIT_MEMLOCK, no CAP_IPC_LOCK). */
int rt_lock_memory(char *why, size_t whylen);

/* Touch bytes of stack now so the thread never page-faults on it later. */
void rt_prefault_stack(size_t bytes);

/* Pin the calling thread to cpu. Returns 0, or -1 with why filled. */
int rt_pin(int cpu, char *why, size_t whylen);

/* Make the calling thread SCHED_FIFO at prio. Returns 0, or -1 with why
 * saying exactly what refused it: no CAP_SYS_NICE, RLIMIT_RTPRIO too low,
 * RestrictRealtime, or CONFIG_RT_GROUP_SCHED with the caller outside the root
 * cgroup (the cgroup v2 trap: no RT runtime for that group). */
int rt_set_fifo(int prio, char *why, size_t whylen);

/* Whether task pid (a process: its main thread) runs at a real-time policy
 * now (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE): 1, 0 not, -1 unknown (no
 * such task in our pid namespace). One system call. */
int rt_task_realtime(int pid);

/* Parse a CPU list ("0", "1-3", "0,2,4-5") into cpus (at most max entries).
 * Returns the number of CPUs, or -1 with why filled. */
int rt_parse_cpus(const char *list, int *cpus, int max, char *why, size_t whylen);

#endif
