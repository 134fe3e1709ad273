/*
 * spawn: the scenario's child processes (relay, the senders): start one with
 * its output in a log file, notice when it ends, stop it within a deadline.
 */
#ifndef DEMO_SPAWN_H
#define DEMO_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct child {
	char name[32];
	pid_t pid;		/* 0 when never started */
	bool done;		/* reaped; status is valid */
	int status;		/* as waitpid reports it */
	bool killed;		/* we had to send SIGKILL */
};

/* Start argv[0] with stdout and stderr appended to log_path. Returns 0, or
 * -1 with err filled (fork failed; a failing exec shows as exit status 127). */
int child_start(struct child *c, const char *name, char *const argv[],
		const char *log_path, char *err, size_t errlen);

/* Reap c if it has ended (never blocks). Returns c->done. */
bool child_poll(struct child *c);

/* Send sig, wait up to within_ms for c to end, then SIGKILL it and wait for
 * that. Returns 0 when it ended by itself after sig, 1 when it was killed. */
int child_stop(struct child *c, int sig, int within_ms);

/* Wait up to within_ms for c to end by itself. Returns c->done. */
bool child_wait(struct child *c, int within_ms);

/* "exited 0", "killed by signal 9", "running", "not started". */
void child_describe(const struct child *c, char *buf, size_t len);

/* True when c ended by itself with exit status 0. */
bool child_ok(const struct child *c);

#endif
