/*
 * vm-clock: does a guest's clock hold? Two measurements, one JSON object on
 * stdout, for tests/vm/vm_clock.sh.
 *
 * rate: the TSC against CLOCK_MONOTONIC over a busy stretch. The kernel
 * turns TSC ticks into CLOCK_MONOTONIC with the rate it was told
 * (tsc_early_khz) or calibrated; when that rate is not the one QEMU feeds
 * the TSC at, the two clocks drift apart and every latency the guest
 * measures is scaled wrong.
 *
 * wake: a SCHED_FIFO thread pinned to --cpu sleeps to absolute deadlines
 * every --period-us and records how late it woke (ns). On the virtual clock
 * this must not depend on what the host is doing.
 *
 *   vm-clock [--cpu N] [--prio N] [--period-us N] [--count N] [--spin-ms N]
 *
 * Exit status: 0 measured; 64 bad command line; 71 the system refused the
 * CPU or the priority.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <x86intrin.h>

#include "clock.h"
#include "hist.h"
#include "rt.h"

struct opts {
	int cpu, prio, period_us, count, spin_ms;
};

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "cpu", 1, 0, 'c' }, { "prio", 1, 0, 'p' }, { "period-us", 1, 0, 'P' },
		{ "count", 1, 0, 'n' }, { "spin-ms", 1, 0, 's' }, { 0 } };
	const struct { int ch; int *v; int min, max; } nums[] = {
		{ 'c', &o->cpu, 0, 1023 }, { 'p', &o->prio, 1, 99 },
		{ 'P', &o->period_us, 10, 1000000 }, { 'n', &o->count, 1, 1000000 },
		{ 's', &o->spin_ms, 1, 60000 } };
	int ch;
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		size_t i;
		for (i = 0; i < sizeof(nums) / sizeof(nums[0]) && nums[i].ch != ch; i++)
			;
		if (i == sizeof(nums) / sizeof(nums[0]))
			return -1;
		char *end;
		errno = 0;
		long v = strtol(optarg, &end, 10);
		if (errno || *end || end == optarg || v < nums[i].min || v > nums[i].max) {
			fprintf(stderr, "vm-clock: -%c '%s': expected a whole number in %d..%d\n",
				ch, optarg, nums[i].min, nums[i].max);
			return -1;
		}
		*nums[i].v = (int)v;
	}
	return optind == argc ? 0 : -1;
}

/* TSC ticks per CLOCK_MONOTONIC nanosecond over spin_ms of busy waiting. */
static json_t *measure_rate(int spin_ms)
{
	int64_t t0 = clock_ns(CLOCK_MONOTONIC);
	uint64_t c0 = __rdtsc();
	int64_t t1;
	do
		t1 = clock_ns(CLOCK_MONOTONIC);
	while (t1 - t0 < (int64_t)spin_ms * 1000000);
	uint64_t c1 = __rdtsc();
	return json_pack("{s:I, s:I, s:f}", "monotonic_ns", (json_int_t)(t1 - t0),
			 "tsc_ticks", (json_int_t)(c1 - c0),
			 "tsc_per_ns", (double)(c1 - c0) / (double)(t1 - t0));
}

static json_t *measure_wake(const struct opts *o, struct hist *h)
{
	int64_t next = clock_ns(CLOCK_MONOTONIC);
	for (int i = 0; i < o->count; i++) {
		next += (int64_t)o->period_us * 1000;
		struct timespec ts = clock_ns_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		hist_record(h, clock_ns(CLOCK_MONOTONIC) - next);
	}
	return json_pack("{s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I}",
			 "cpu", o->cpu, "period_us", o->period_us, "count", o->count,
			 "p50_ns", (json_int_t)hist_percentile(h, 50),
			 "p99_ns", (json_int_t)hist_percentile(h, 99),
			 "p99_9_ns", (json_int_t)hist_percentile(h, 99.9),
			 "max_ns", (json_int_t)hist_max(h),
			 "min_ns", (json_int_t)hist_min(h));
}

int main(int argc, char **argv)
{
	struct opts o = { .cpu = 1, .prio = 80, .period_us = 1000, .count = 2000,
			  .spin_ms = 500 };
	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: vm-clock [--cpu N] [--prio N] [--period-us N] "
			"[--count N] [--spin-ms N]\n");
		return EX_USAGE;
	}
	char why[256];
	if (rt_lock_memory(why, sizeof(why)) < 0 || rt_pin(o.cpu, why, sizeof(why)) < 0 ||
	    rt_set_fifo(o.prio, why, sizeof(why)) < 0) {
		fprintf(stderr, "vm-clock: %s\n", why);
		return EX_OSERR;
	}
	struct hist h;
	if (hist_init(&h, 1, 10LL * 1000000000, 3) < 0) {
		fprintf(stderr, "vm-clock: %s\n", strerror(errno));
		return EX_OSERR;
	}
	json_t *doc = json_pack("{s:o, s:o}", "rate", measure_rate(o.spin_ms),
				"wake", measure_wake(&o, &h));
	json_dumpf(doc, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	putchar('\n');
	json_decref(doc);
	hist_free(&h);
	return 0;
}
