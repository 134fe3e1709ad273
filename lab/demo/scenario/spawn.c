#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int child_start(struct child *c, const char *name, char *const argv[],
		const char *log_path, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (log < 0) {
		snprintf(err, errlen, "cannot open %s: %s", log_path, strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start %s: fork: %s", name, strerror(errno));
		close(log);
		return -1;
	}
	if (pid == 0) {
		dup2(log, 1);
		dup2(log, 2);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(log);
	c->pid = pid;
	return 0;
}

bool child_poll(struct child *c)
{
	if (c->pid <= 0 || c->done)
		return c->done;
	int st;
	if (waitpid(c->pid, &st, WNOHANG) == c->pid) {
		c->done = true;
		c->status = st;
	}
	return c->done;
}

bool child_wait(struct child *c, int within_ms)
{
	struct timespec step = { 0, 10 * 1000 * 1000 };
	for (int waited = 0; !child_poll(c) && waited < within_ms; waited += 10)
		nanosleep(&step, NULL);
	return c->done;
}

int child_stop(struct child *c, int sig, int within_ms)
{
	if (c->pid <= 0 || child_poll(c))
		return 0;
	kill(c->pid, sig);
	if (child_wait(c, within_ms))
		return 0;
	kill(c->pid, SIGKILL);
	c->killed = true;
	int st;
	if (waitpid(c->pid, &st, 0) == c->pid) {
		c->done = true;
		c->status = st;
	}
	return 1;
}

void child_describe(const struct child *c, char *buf, size_t len)
{
	if (c->pid <= 0)
		snprintf(buf, len, "not started");
	else if (!c->done)
		snprintf(buf, len, "running");
	else if (WIFEXITED(c->status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(c->status));
	else
		snprintf(buf, len, "killed by signal %d%s", WTERMSIG(c->status),
			 c->killed ? " (did not stop in time)" : "");
}

bool child_ok(const struct child *c)
{
	return c->done && !c->killed && WIFEXITED(c->status) &&
	       WEXITSTATUS(c->status) == 0;
}
