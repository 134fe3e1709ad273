/*
 * libFuzzer target for loadgen merge (loadgen/merge.c over lib/hlog.c)
 * with many inputs at once: the input is split at form feeds into up to
 * MAX_FILES interval logs (a part that is exactly "--partial" is that flag
 * instead), which merge_main adds up. Whatever the logs declare, a merge
 * must do work in proportion to what it is given:
 *
 *   memory: the heap it holds at its peak is at most five histograms of
 *   HLOG_MAX_SLOTS (the first interval's, two for the input being read,
 *   two for the sum) and what the bytes can inflate to (DEFLATE: 1032 to 1);
 *
 *   time: its CPU time is at most SLACK times that of a calibration merge
 *   (one log of two largest histograms, every slot counted: the most
 *   decoding a byte can ask for, and the most a file's percentiles cost)
 *   per input and per calibration size of bytes. The calibration runs
 *   here, on this host, under this build.
 *
 * A merge that breaks either bound aborts, as does a crash.
 */
#include <sanitizer/allocator_interface.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hlog.h"
#include "../../loadgen/merge.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file costs passes over a histogram of up to HLOG_MAX_SLOTS (its
 * percentiles, its addition to the sum), 0.4 s of CPU under this build
 * for the largest: 4 of them stay well within libFuzzer's 5 s a run. */
#define MAX_FILES	4
#define SLACK		10
/* jansson's objects, stdio and zlib state, getline's buffer: ample */
#define FIXED_BYTES	(2u << 20)

static char dir[4096];
static double cal_cpu_s;		/* a calibration merge's CPU time */
static size_t cal_size;			/* its bytes */

/* The heap merge_main holds, counted from the allocator's own hooks. */
static size_t live, peak;
static int counting;

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	if (counting && (live += n) > peak)
		peak = live;
}

/* Memory allocated before the count began may be freed during it. */
static void on_free(const volatile void *p)
{
	size_t n = counting && p ? __sanitizer_get_allocated_size(
					   (const void *)p) : 0;
	live -= n < live ? n : live;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write part i to its file; returns its path. */
static const char *put(int i, const uint8_t *p, size_t n)
{
	static char paths[MAX_FILES][4200];
	snprintf(paths[i], sizeof(paths[i]), "%s/in%d.hlog", dir, i);
	FILE *f = fopen(paths[i], "w");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
	return paths[i];
}

/* Merge the parts of data; returns the number of input files. */
static int merge(const uint8_t *data, size_t size)
{
	char out[4200];
	char *argv[MAX_FILES + 5] = { "merge", "--json", out };
	int argc = 3, files = 0;
	bool partial = false;
	snprintf(out, sizeof(out), "%s/out.json", dir);
	for (const uint8_t *p = data, *end = data + size; p < end;) {
		const uint8_t *ff = memchr(p, '\f', (size_t)(end - p));
		size_t n = (size_t)((ff ? ff : end) - p);
		if (n == 9 && memcmp(p, "--partial", 9) == 0)
			partial = true;
		else if (files < MAX_FILES)
			argv[argc++] = (char *)put(files++, p, n);
		p += n + (ff != NULL);
	}
	if (!files)
		return 0;
	if (partial)
		argv[argc++] = "--partial";
	argv[argc] = NULL;
	merge_main(argc, argv);
	return files;
}

/* The calibration log: two histograms of every slot counted once. */
static char *calibration(void)
{
	struct hist h;
	if (hist_init(&h, 1, (INT64_C(1) << 24) - 1, 5) < 0 ||
	    h.counts_len != HLOG_MAX_SLOTS)
		abort();
	for (int32_t i = 0; i < h.counts_len; i++)
		hist_add_at(&h, i, 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || hlog_write_header(f, NULL, 0) < 0 ||
	    hlog_write_interval(f, NULL, 0, 1, &h, 1000.0) < 0 ||
	    hlog_write_interval(f, "uncorrected", 0, 1, &h, 1000.0) < 0 ||
	    fclose(f) != 0)
		abort();
	hist_free(&h);
	return buf;
}

/* The inputs and the output go with the process. */
static void cleanup(void)
{
	char path[4200];
	for (int i = 0; i < MAX_FILES; i++) {
		snprintf(path, sizeof(path), "%s/in%d.hlog", dir, i);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/out.json", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/fuzz_merge.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	/* merge prints a table per merge */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	if (!__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free))
		abort();
	char *cal = calibration();
	cal_size = strlen(cal);
	cal_cpu_s = 1e9;
	for (int i = 0; i < 3; i++) {
		double t0 = cpu_s();
		merge((const uint8_t *)cal, cal_size);
		if (cpu_s() - t0 < cal_cpu_s)
			cal_cpu_s = cpu_s() - t0;
	}
	free(cal);
	fprintf(stderr, "fuzz_merge: calibration: %zu bytes, %.1f ms of CPU\n",
		cal_size, cal_cpu_s * 1e3);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	live = peak = 0;
	counting = 1;
	double t0 = cpu_s();
	int files = merge(data, size);
	double took = cpu_s() - t0;
	counting = 0;
	if (!files)
		return 0;	/* nothing merged: nothing to measure */
	size_t mem_limit = FIXED_BYTES + 5 * (size_t)HLOG_MAX_SLOTS *
			   sizeof(uint64_t) + 1032 * size;
	double cpu_limit = SLACK * cal_cpu_s *
			   (files + (double)size / (double)cal_size);
	if (peak > mem_limit || took > cpu_limit) {
		fprintf(stderr, "fuzz_merge: %d inputs of %zu bytes in all took "
			"%.1f ms of CPU (limit %.1f) and %zu bytes of heap "
			"(limit %zu)\n", files, size, took * 1e3,
			cpu_limit * 1e3, peak, mem_limit);
		abort();
	}
	return 0;
}
