#include "pace.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int pace_open(struct pace *p, int skip_cpu, int64_t step_ns, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);	/* online or not: numbered below */
	p->n = 0;
	for (int cpu = 0; cpu < ncpu && cpu < PACE_MAX_CPUS; cpu++) {
		if (cpu == skip_cpu)
			continue;
		struct perf_event_attr a = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(a),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = (uint64_t)step_ns,
			.disabled = 1,
		};
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == ENODEV)		/* not online */
			continue;
		if (fd < 0) {
			snprintf(err, errlen, "a cpu-clock perf event on CPU %d: %s", cpu,
				 strerror(errno));
			pace_close(p);
			return -1;
		}
		p->fd[p->n++] = fd;
	}
	return 0;
}

void pace_on(struct pace *p)
{
	for (int i = 0; i < p->n; i++)
		(void)ioctl(p->fd[i], PERF_EVENT_IOC_ENABLE, 0);
}

void pace_off(struct pace *p)
{
	for (int i = 0; i < p->n; i++)
		(void)ioctl(p->fd[i], PERF_EVENT_IOC_DISABLE, 0);
}

int64_t pace_total_ns(const struct pace *p)
{
	int64_t sum = 0;
	for (int i = 0; i < p->n; i++) {
		uint64_t v;
		if (read(p->fd[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += (int64_t)v;
	}
	return sum;
}

void pace_close(struct pace *p)
{
	for (int i = 0; i < p->n; i++)
		close(p->fd[i]);
	p->n = 0;
}
