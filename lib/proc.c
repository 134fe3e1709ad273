/*
 * proc: readers of the kernel's per-task text files (see proc.h).
 */
#include "proc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int proc_status_field(const char *file, const char *key, char *out,
		      size_t len)
{
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	/* whole lines: a fixed buffer would cut a long line in two, and its
	 * second half could pass for a line of its own */
	char *line = NULL;
	size_t cap = 0, klen = strlen(key);
	int found = -1;
	while (getline(&line, &cap, f) >= 0) {
		if (strncmp(line, key, klen) != 0 || line[klen] != ':')
			continue;
		const char *v = line + klen + 1;
		v += strspn(v, " \t");
		size_t n = strcspn(v, "\n");
		if (n < len) {
			memcpy(out, v, n);
			out[n] = 0;
			found = 0;
		}
		break;
	}
	free(line);
	fclose(f);
	return found;
}

int proc_status_caps(const char *file, uint64_t *caps)
{
	char v[32];
	if (proc_status_field(file, "CapEff", v, sizeof(v)) < 0)
		return -1;
	size_t n = strspn(v, "0123456789abcdefABCDEF");
	if (n == 0 || n > 16 || v[n])
		return -1;
	*caps = strtoull(v, NULL, 16);
	return 0;
}

/* A whole number at *p, then a blank or the end; *p moves past it. */
static int whole(const char **p, int64_t *v)
{
	const char *s = *p;
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\n'))
		return -1;
	*v = x;
	*p = end;
	return 0;
}

int64_t proc_schedstat_delay(const char *text)
{
	int64_t run, delay;
	if (whole(&text, &run) < 0 || *text != ' ')
		return -1;
	text += strspn(text, " ");
	return whole(&text, &delay) < 0 ? -1 : delay;
}
