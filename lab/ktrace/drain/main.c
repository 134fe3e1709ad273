/*
 * ktrace-drain [--keep FROM:TO]... FILE OUT: copy what a tracefs per-CPU
 * trace_pipe_raw holds now into OUT (- for standard output), and stop
 * there. The ring buffer's pages go out as the kernel keeps them
 * (trace-cmd reads them on the host), which costs an emulated guest a copy
 * where formatting the text trace cost it minutes.
 *
 * trace_pipe_raw blocks when it is empty, even with tracing off, so cat
 * would never end: the file is read non-blocking until it says EAGAIN (or
 * end of file, which a pipe says). Prints "B bytes" on success (on
 * standard error when the pages go to standard output).
 *
 * --keep FROM:TO (seconds on the trace's clock, CLOCK_MONOTONIC; as many
 * as needed) keeps only the pages whose span meets one of the windows: a
 * page starts with the time of its first event and runs to the next
 * page's, so a window's every event is kept, with at most a page more on
 * either side. Whatever leaves the guest crosses an emulated UART at some
 * 4 us a byte: a capacity grid reads only its missed steps' spans, and
 * the rest would be minutes of transfer. Then it says "B bytes, K of N
 * pages".
 *
 * Exit status: 0 copied; 64 bad command line; 66 FILE cannot be opened or
 * read; 71 out of memory; 73 OUT cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#define MAX_WINDOWS 256

struct window {
	uint64_t from, to;		/* ns on the trace's clock */
};

struct drain {
	int in, out;
	const char *in_name, *out_name;
	size_t page;			/* one read returns at most this */
	struct window keep[MAX_WINDOWS];
	int nkeep;			/* 0: every page */
	long long bytes, pages, kept;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* FROM:TO in seconds into w; false unless both are numbers, FROM <= TO. */
static bool parse_window(const char *s, struct window *w)
{
	char *end;
	errno = 0;
	double from = strtod(s, &end);
	if (end == s || *end != ':' || errno)
		return false;
	const char *t = end + 1;
	double to = strtod(t, &end);
	if (end == t || *end || errno || from < 0 || to < from || to > 1e9)
		return false;
	w->from = (uint64_t)(from * 1e9);
	w->to = (uint64_t)(to * 1e9);
	return true;
}

/* A ring-buffer page begins with the time stamp of its first event. */
static uint64_t page_time(const char *p, size_t n)
{
	uint64_t ts = 0;
	if (n >= sizeof(ts))
		memcpy(&ts, p, sizeof(ts));
	return ts;
}

static bool wanted(const struct drain *d, uint64_t from, uint64_t to)
{
	if (!d->nkeep)
		return true;
	for (int i = 0; i < d->nkeep; i++)
		if (d->keep[i].from <= to && from <= d->keep[i].to)
			return true;
	return false;
}

/* Out with the page held (n bytes), if its span [its time, next) is wanted. */
static int emit(struct drain *d, const char *p, size_t n, uint64_t next)
{
	d->pages++;
	if (!wanted(d, page_time(p, n), next))
		return 0;
	if (write_all(d->out, p, n) < 0) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", d->out_name, strerror(errno));
		return EX_CANTCREAT;
	}
	d->kept++;
	d->bytes += (long long)n;
	return 0;
}

/* Reads until the file is empty, one page held back until the next one's
 * time says where it ends. */
static int copy(struct drain *d)
{
	char *buf = malloc(2 * d->page);
	if (!buf) {
		fprintf(stderr, "ktrace-drain: out of memory\n");
		return EX_OSERR;
	}
	char *held = buf, *cur = buf + d->page;
	size_t nheld = 0;
	int rc = 0;
	for (;;) {
		ssize_t n = read(d->in, cur, d->page);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno == EAGAIN))
			break;
		if (n < 0) {
			fprintf(stderr, "ktrace-drain: %s: %s\n", d->in_name, strerror(errno));
			rc = EX_NOINPUT;
			break;
		}
		if (nheld && (rc = emit(d, held, nheld, page_time(cur, (size_t)n))))
			break;
		char *t = held;
		held = cur;
		cur = t;
		nheld = (size_t)n;
	}
	if (!rc && nheld)
		rc = emit(d, held, nheld, UINT64_MAX);
	free(buf);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: ktrace-drain [--keep FROM:TO]... FILE OUT\n");
	return EX_USAGE;
}

int main(int argc, char **argv)
{
	struct drain d = { .in = -1, .out = -1 };
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--keep") == 0; i += 2) {
		if (i + 1 >= argc)
			return usage();
		if (d.nkeep == MAX_WINDOWS) {
			fprintf(stderr, "ktrace-drain: more than %d --keep windows\n", MAX_WINDOWS);
			return EX_USAGE;
		}
		if (!parse_window(argv[i + 1], &d.keep[d.nkeep++])) {
			fprintf(stderr, "ktrace-drain: --keep '%s': expected FROM:TO, seconds, "
				"FROM <= TO\n", argv[i + 1]);
			return EX_USAGE;
		}
	}
	if (argc - i != 2)
		return usage();
	d.in_name = argv[i];
	d.out_name = argv[i + 1];
	d.in = open(d.in_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (d.in < 0) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", d.in_name, strerror(errno));
		return EX_NOINPUT;
	}
	bool to_stdout = strcmp(d.out_name, "-") == 0;
	d.out = to_stdout ? STDOUT_FILENO
			  : open(d.out_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (d.out < 0) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", d.out_name, strerror(errno));
		close(d.in);
		return EX_CANTCREAT;
	}
	long page = sysconf(_SC_PAGESIZE);
	d.page = page > 0 ? (size_t)page : 4096;
	int rc = copy(&d);
	close(d.in);
	if (close(d.out) < 0 && !rc) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", d.out_name, strerror(errno));
		rc = EX_CANTCREAT;
	}
	if (rc)
		return rc;
	FILE *say = to_stdout ? stderr : stdout;
	if (d.nkeep)
		fprintf(say, "%lld bytes, %lld of %lld pages\n", d.bytes, d.kept, d.pages);
	else
		fprintf(say, "%lld bytes\n", d.bytes);
	return EX_OK;
}
