/*
 * rt: real-time thread set-up. The interesting part is the failure path:
 * sched_setscheduler() answers EPERM for four unrelated reasons, and an
 * operator can only fix the one we name. We look at what the kernel shows of
 * the process (capabilities, rlimits, seccomp, cgroup) and say which one it
 * is, in the order the kernel checks them.
 */
#include "rt.h"
#include "cgroup.h"
#include "proc.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#define CAP_IPC_LOCK_BIT	14
#define CAP_SYS_NICE_BIT	23

/* 1 when the effective capability set holds bit, 0 when not, -1 unknown. */
static int has_cap(int bit)
{
	uint64_t caps;
	if (proc_status_caps("/proc/self/status", &caps) < 0)
		return -1;
	return (caps >> bit) & 1;
}

static void fmt_rlim(rlim_t r, char *buf, size_t len)
{
	if (r == RLIM_INFINITY)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%llu", (unsigned long long)r);
}

int rt_lock_memory(char *why, size_t whylen)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0)
		return 0;
	int err = errno;
	struct rlimit rl = {0, 0};
	getrlimit(RLIMIT_MEMLOCK, &rl);
	char lim[32];
	fmt_rlim(rl.rlim_cur, lim, sizeof(lim));
	if (err == EPERM)
		snprintf(why, whylen,
			 "mlockall refused: no CAP_IPC_LOCK and RLIMIT_MEMLOCK "
			 "is %s bytes (ulimit -l unlimited, or LimitMEMLOCK=infinity "
			 "under systemd)", lim);
	else if (err == ENOMEM)
		snprintf(why, whylen,
			 "mlockall refused: the process needs more than "
			 "RLIMIT_MEMLOCK (%s bytes)%s; raise it (ulimit -l "
			 "unlimited, or LimitMEMLOCK=infinity under systemd)", lim,
			 has_cap(CAP_IPC_LOCK_BIT) == 1 ? "" :
			 " and there is no CAP_IPC_LOCK");
	else
		snprintf(why, whylen, "mlockall: %s", strerror(err));
	errno = err;
	return -1;
}

/* noinline and the compiler barrier keep the touched array from being
 * optimised away: its pages must really be written once. Touched from the
 * top down, the order a growing stack allows. */
__attribute__((noinline)) void rt_prefault_stack(size_t bytes)
{
	if (!bytes)
		return;
	volatile unsigned char buf[bytes];
	for (size_t i = bytes; i > 0; i -= i < 4096 ? i : 4096)
		buf[i - 1] = 0;
	__asm__ __volatile__("" : : "r"(buf) : "memory");
}

int rt_pin(int cpu, char *why, size_t whylen)
{
	if (cpu < 0 || cpu >= CPU_SETSIZE) {
		snprintf(why, whylen, "CPU %d is out of range 0..%d", cpu,
			 CPU_SETSIZE - 1);
		return -1;
	}
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err == 0)
		return 0;
	if (err == EINVAL) {
		cpu_set_t allowed;
		CPU_ZERO(&allowed);
		sched_getaffinity(0, sizeof(allowed), &allowed);
		snprintf(why, whylen,
			 "cannot pin to CPU %d: it is offline or outside this "
			 "process's allowed CPUs (%d allowed; see taskset -p or "
			 "the cgroup's cpuset.cpus)", cpu, CPU_COUNT(&allowed));
	} else {
		snprintf(why, whylen, "cannot pin to CPU %d: %s", cpu,
			 strerror(err));
	}
	errno = err;
	return -1;
}

/* 1 when the running kernel has CONFIG_RT_GROUP_SCHED=y, 0 when it does
 * not, -1 when we cannot tell. The cgroup v1 file exists only with it; the
 * kernel config (when exported) answers for v2. */
static int rt_group_sched(void)
{
	FILE *f = fopen("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", "r");
	if (!f)
		f = fopen("/sys/fs/cgroup/cpu,cpuacct/cpu.rt_runtime_us", "r");
	if (f) {
		fclose(f);
		return 1;
	}
	struct utsname u;
	char path[512];
	uname(&u);
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	int yes = 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "CONFIG_RT_GROUP_SCHED=y", 23) == 0)
			yes = 1;
	fclose(f);
	return yes;
}

int rt_set_fifo(int prio, char *why, size_t whylen)
{
	int lo = sched_get_priority_min(SCHED_FIFO);
	int hi = sched_get_priority_max(SCHED_FIFO);
	if (prio < lo || prio > hi) {
		snprintf(why, whylen, "SCHED_FIFO priority %d is out of range "
			 "%d..%d", prio, lo, hi);
		errno = EINVAL;
		return -1;
	}
	struct sched_param sp = { .sched_priority = prio };
	int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (err == 0)
		return 0;
	if (err != EPERM) {
		snprintf(why, whylen, "SCHED_FIFO %d refused: %s", prio,
			 strerror(err));
		errno = err;
		return -1;
	}

	/* EPERM: find which of the kernel's checks said no. */
	struct rlimit rl = {0, 0};
	getrlimit(RLIMIT_RTPRIO, &rl);
	int cap = has_cap(CAP_SYS_NICE_BIT);
	char seccomp[16] = "";
	proc_status_field("/proc/self/status", "Seccomp", seccomp,
			  sizeof(seccomp));
	char cg[1024];
	if (cg_task_cgroup_in("/proc/self/cgroup", cg, sizeof(cg)) < 0)
		cg[0] = 0;
	int grp = rt_group_sched();

	if (cap != 1 && (rl.rlim_cur == RLIM_INFINITY ? 0 :
			 rl.rlim_cur < (rlim_t)prio)) {
		char lim[32];
		fmt_rlim(rl.rlim_cur, lim, sizeof(lim));
		snprintf(why, whylen,
			 "SCHED_FIFO %d refused: no CAP_SYS_NICE and "
			 "RLIMIT_RTPRIO is %s (below %d); run as root, grant "
			 "CAP_SYS_NICE, or raise it (ulimit -r %d, or "
			 "LimitRTPRIO=%d under systemd)", prio, lim, prio, prio,
			 prio);
	} else if (grp == 1 && cg[0] && strcmp(cg, "/") != 0) {
		snprintf(why, whylen,
			 "SCHED_FIFO %d refused: the kernel has "
			 "CONFIG_RT_GROUP_SCHED and this process is in cgroup "
			 "%s, which has no real-time budget (cpu.rt_runtime_us "
			 "is 0 outside the root cgroup; under systemd this is "
			 "unit status 214/SETSCHEDULER); run it in the root "
			 "cgroup or give the group RT runtime", prio, cg);
	} else if (strcmp(seccomp, "2") == 0) {
		snprintf(why, whylen,
			 "SCHED_FIFO %d refused by a seccomp filter (systemd "
			 "RestrictRealtime=yes, or a container runtime's "
			 "profile); drop that restriction", prio);
	} else if (cap != 1 && rl.rlim_cur != RLIM_INFINITY) {
		snprintf(why, whylen,
			 "SCHED_FIFO %d refused although RLIMIT_RTPRIO allows "
			 "it: no CAP_SYS_NICE and the thread is SCHED_IDLE or "
			 "has RT runtime limits; run as root or with "
			 "CAP_SYS_NICE", prio);
	} else {
		snprintf(why, whylen,
			 "SCHED_FIFO %d refused (EPERM) with CAP_SYS_NICE: "
			 "most likely CONFIG_RT_GROUP_SCHED with cgroup %s "
			 "lacking RT runtime, or a security module", prio,
			 cg[0] ? cg : "(unknown)");
	}
	errno = EPERM;
	return -1;
}

int rt_parse_cpus(const char *list, int *cpus, int max, char *why, size_t whylen)
{
	int n = 0;
	const char *p = list;
	if (!list || !*list) {
		snprintf(why, whylen, "empty CPU list");
		return -1;
	}
	while (*p) {
		char *end;
		errno = 0;
		long a = strtol(p, &end, 10);
		if (end == p || errno || a < 0 || a >= CPU_SETSIZE) {
			snprintf(why, whylen, "bad CPU list '%s' at '%s': "
				 "expected a CPU number 0..%d", list, p,
				 CPU_SETSIZE - 1);
			return -1;
		}
		long b = a;
		p = end;
		if (*p == '-') {
			const char *q = p + 1;
			errno = 0;
			b = strtol(q, &end, 10);
			if (end == q || errno || b < a || b >= CPU_SETSIZE) {
				snprintf(why, whylen, "bad CPU range in '%s' at "
					 "'%s': expected N-M with N <= M", list, p);
				return -1;
			}
			p = end;
		}
		for (long c = a; c <= b; c++) {
			for (int i = 0; i < n; i++)
				if (cpus[i] == c) {
					snprintf(why, whylen, "CPU %ld appears "
						 "twice in '%s'", c, list);
					return -1;
				}
			if (n >= max) {
				snprintf(why, whylen, "CPU list '%s' names more "
					 "than %d CPUs", list, max);
				return -1;
			}
			cpus[n++] = (int)c;
		}
		if (*p == ',') {
			p++;
			if (!*p) {
				snprintf(why, whylen, "CPU list '%s' ends with ','",
					 list);
				return -1;
			}
		} else if (*p) {
			snprintf(why, whylen, "bad CPU list '%s' at '%s': "
				 "expected ',' or '-'", list, p);
			return -1;
		}
	}
	return n;
}

int rt_task_realtime(int pid)
{
	if (pid <= 0)
		return -1;
	int policy = sched_getscheduler(pid);
	if (policy < 0)
		return -1;	/* gone, or not in our pid namespace */
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR ||
	       policy == SCHED_DEADLINE;
}
