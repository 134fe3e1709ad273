/*
 * libFuzzer target for the /proc readers (lib/proc.c): a status file
 * (proc_status_field, proc_status_caps; relay and loadgen read CapEff and
 * Seccomp from it to say why SCHED_FIFO was refused) and a schedstat line
 * (proc_schedstat_delay; relay's overload guard reads its run delay from
 * it). The input is the two texts, separated by a NUL byte; the target
 * writes the status text to a file of its own and reads it back.
 *
 * The oracle reads the texts its own way and the readers must agree with
 * it: a field is the rest of the first line that starts with "key:",
 * blanks skipped, and only when it fits; a capability set is such a
 * field of 1 to 16 hex digits; a run delay is the second of two whole
 * numbers at the start of the line, both within int64_t.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char file[4200];

static void cleanup(void)
{
	unlink(file);
}

static void make_file(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(file, sizeof(file), "%s/fuzz_proc.XXXXXX", tmp ? tmp : P_tmpdir);
	int fd = mkstemp(file);
	if (fd < 0)
		abort();
	close(fd);
	atexit(cleanup);
}

static void put(const char *text, size_t len)
{
	int fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0)
		abort();
}

/* The value of the first "key:" line of text, its length in *n, or NULL. */
static const char *field(const char *text, const char *key, size_t *n)
{
	size_t kl = strlen(key);
	for (const char *l = text; *l; l += strcspn(l, "\n"), l += *l == '\n') {
		if (strncmp(l, key, kl) != 0 || l[kl] != ':')
			continue;
		const char *v = l + kl + 1;
		v += strspn(v, " \t");
		*n = strcspn(v, "\n");
		return v;
	}
	return NULL;
}

static void check_field(const char *text, const char *key, size_t len)
{
	char out[64];
	size_t n = 0;
	const char *v = field(text, key, &n);
	int r = proc_status_field(file, key, out, len);
	if (r != (v && n < len ? 0 : -1))
		abort();
	if (r == 0 && (strlen(out) != n || memcmp(out, v, n) != 0))
		abort();
}

static void check_caps(const char *text)
{
	size_t n = 0;
	const char *v = field(text, "CapEff", &n);
	bool ok = v && n >= 1 && n <= 16;
	uint64_t want = 0;
	for (size_t i = 0; ok && i < n; i++) {
		char c = v[i];
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		ok = d >= 0;
		want = want << 4 | (uint64_t)(d & 15);
	}
	uint64_t caps = 0x5a5a5a5a;
	int r = proc_status_caps(file, &caps);
	if (r != (ok ? 0 : -1) || (ok && caps != want) ||
	    (!ok && caps != 0x5a5a5a5a))
		abort();
}

/* A run of digits at p whose value fits int64_t, its length in *n. */
static bool digits(const char *p, size_t *n)
{
	*n = strspn(p, "0123456789");
	if (*n == 0)
		return false;
	const char *s = p;
	size_t sl = *n;
	while (sl > 1 && *s == '0')
		s++, sl--;
	return sl < 19 || (sl == 19 && memcmp(s, "9223372036854775807", 19) <= 0);
}

static void check_schedstat(const char *text)
{
	size_t n1, n2;
	int64_t want = -1;
	if (digits(text, &n1) && text[n1] == ' ') {
		const char *p = text + n1 + strspn(text + n1, " ");
		if (digits(p, &n2) && (!p[n2] || p[n2] == ' ' || p[n2] == '\n'))
			want = strtoll(p, NULL, 10);
	}
	if (proc_schedstat_delay(text) != want)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!file[0])
		make_file();
	char *text = malloc(size + 2);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = text[size + 1] = 0;
	size_t sl = strlen(text);
	const char *sched = sl < size ? text + sl + 1 : "";

	put(text, sl);
	check_field(text, "Name", 16);
	check_field(text, "Seccomp", 2);
	check_field(text, "Cap", 64);
	check_caps(text);
	check_schedstat(sched);
	free(text);
	return 0;
}
