/* Unit tests for lib/rt: the CPU list parser, pinning, and that a refused
 * SCHED_FIFO names its reason (checked by dropping RLIMIT_RTPRIO in a
 * child that has no CAP_SYS_NICE, when we can). */
#include "check.h"
#include "rt.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char why[256];

static void cpus_ok(const char *list, int n, const int *want)
{
	int got[16];
	CHECK_EQ_INT(rt_parse_cpus(list, got, 16, why, sizeof(why)), n);
	for (int i = 0; i < n; i++)
		CHECK_EQ_INT(got[i], want[i]);
}

static void cpus_bad(const char *list, int max, const char *want)
{
	int got[16];
	why[0] = 0;
	CHECK_EQ_INT(rt_parse_cpus(list, got, max, why, sizeof(why)), -1);
	if (!strstr(why, want))
		fprintf(stderr, "  '%s': '%s' lacks '%s'\n", list, why, want);
	CHECK(strstr(why, want) != NULL);
}

static void test_parse(void)
{
	cpus_ok("0", 1, (int[]){0});
	cpus_ok("1-3", 3, (int[]){1, 2, 3});
	cpus_ok("0,2,4-5", 4, (int[]){0, 2, 4, 5});
	cpus_bad("", 16, "empty");
	cpus_bad("a", 16, "expected a CPU number");
	cpus_bad("3-1", 16, "N <= M");
	cpus_bad("1,1", 16, "twice");
	cpus_bad("0-4", 3, "more than 3");
	cpus_bad("1,", 16, "ends with ','");
	cpus_bad("1;2", 16, "expected ',' or '-'");
	cpus_bad("-1", 16, "expected a CPU number");
}

static void test_pin(void)
{
	CHECK_EQ_INT(rt_pin(0, why, sizeof(why)), 0);
	CHECK_EQ_INT(sched_getcpu(), 0);
	CHECK_EQ_INT(rt_pin(CPU_SETSIZE - 1, why, sizeof(why)), -1);
	CHECK(strstr(why, "offline or outside") != NULL);
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	sched_setaffinity(0, sizeof(all), &all);
	rt_prefault_stack(256 * 1024);
}

/* In a child: lose root's privileges, then SCHED_FIFO must be refused with
 * the RLIMIT_RTPRIO reason. */
static void test_refusal(void)
{
	CHECK_EQ_INT(rt_set_fifo(0, why, sizeof(why)), -1);
	CHECK(strstr(why, "out of range") != NULL);
	if (getuid() != 0)
		return;
	int fd[2];
	CHECK(pipe(fd) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		struct rlimit rl = {0, 0};
		setrlimit(RLIMIT_RTPRIO, &rl);
		char msg[256] = "";
		if (setgid(65534) == 0 && setuid(65534) == 0 &&
		    rt_set_fifo(10, msg, sizeof(msg)) == -1)
			(void)!write(fd[1], msg, strlen(msg));
		_exit(0);
	}
	close(fd[1]);
	char msg[256] = "";
	ssize_t n = read(fd[0], msg, sizeof(msg) - 1);
	close(fd[0]);
	waitpid(pid, NULL, 0);
	CHECK(n > 0);
	if (!strstr(msg, "RLIMIT_RTPRIO is 0"))
		fprintf(stderr, "  refusal message: '%s'\n", msg);
	CHECK(strstr(msg, "no CAP_SYS_NICE and RLIMIT_RTPRIO is 0") != NULL);
}

int main(void)
{
	test_parse();
	test_pin();
	test_refusal();
	return check_done();
}
