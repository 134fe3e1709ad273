/*
 * ktrace-drain FILE OUT: copy what a tracefs per-CPU trace_pipe_raw holds
 * now into OUT (- for standard output), and stop there. The ring buffer's pages go out as the
 * kernel keeps them (trace-cmd reads them on the host), which costs an
 * emulated guest a copy where formatting the text trace cost it minutes.
 *
 * trace_pipe_raw blocks when it is empty, even with tracing off, so cat
 * would never end: the file is read non-blocking until it says EAGAIN (or
 * end of file, which a pipe says). Prints "B bytes" on success (on
 * standard error when the pages go to standard output).
 *
 * Exit status: 0 copied; 64 bad command line; 66 FILE cannot be opened or
 * read; 73 OUT cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: ktrace-drain FILE OUT\n");
		return EX_USAGE;
	}
	int in = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in < 0) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", argv[1], strerror(errno));
		return EX_NOINPUT;
	}
	bool to_stdout = strcmp(argv[2], "-") == 0;
	int out = to_stdout ? STDOUT_FILENO
			    : open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", argv[2], strerror(errno));
		close(in);
		return EX_CANTCREAT;
	}
	/* One read returns at most one ring-buffer page. */
	long page = sysconf(_SC_PAGESIZE);
	size_t size = page > 0 ? (size_t)page : 4096;
	char *buf = malloc(size);
	long long bytes = 0;
	int rc = EX_OK;
	for (;;) {
		ssize_t n = buf ? read(in, buf, size) : -1;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno == EAGAIN))
			break;
		if (n < 0) {
			fprintf(stderr, "ktrace-drain: %s: %s\n", argv[1],
				buf ? strerror(errno) : "out of memory");
			rc = EX_NOINPUT;
			break;
		}
		if (write_all(out, buf, (size_t)n) < 0) {
			fprintf(stderr, "ktrace-drain: %s: %s\n", argv[2], strerror(errno));
			rc = EX_CANTCREAT;
			break;
		}
		bytes += n;
	}
	free(buf);
	close(in);
	if (close(out) < 0 && rc == EX_OK) {
		fprintf(stderr, "ktrace-drain: %s: %s\n", argv[2], strerror(errno));
		rc = EX_CANTCREAT;
	}
	if (rc == EX_OK)
		fprintf(to_stdout ? stderr : stdout, "%lld bytes\n", bytes);
	return rc;
}
