/*
 * proc: readers of the kernel's per-task text files under /proc. The
 * kernel writes them, but a reader that trusts their shape is a reader
 * that misreads the next kernel's: each one takes a value only when the
 * text says it whole.
 */
#ifndef RELAY_PROC_H
#define RELAY_PROC_H

#include <stddef.h>
#include <stdint.h>

/* The value of the "key:" line of a status file (/proc/self/status), its
 * leading blanks skipped, in out. Returns 0, or -1 when the file cannot
 * be read, has no such line, or the value does not fit in len bytes. */
int proc_status_field(const char *file, const char *key, char *out,
		      size_t len);

/* The effective capability set (the CapEff line) of a status file in
 * *caps. Returns 0, or -1 when the line is missing or not 1 to 16 hex
 * digits. */
int proc_status_caps(const char *file, uint64_t *caps);

/* The run delay (ns spent waiting on a run queue) that a schedstat text
 * ("exec_runtime run_delay timeslices") says, or -1 when it does not
 * start with two whole numbers that fit an int64_t. */
int64_t proc_schedstat_delay(const char *text);

#endif
