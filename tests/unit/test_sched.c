/* Unit tests for loadgen/sched: exact intended times, threads that
 * partition one global schedule, no drift over a long run, due counts at
 * and between packet times, fractional rates, and the bounded busy-wait
 * before a send. */
#include "check.h"
#include "../../loadgen/sched.h"

#include <stdint.h>
#include <stdlib.h>

static void test_total(void)
{
	CHECK_EQ_INT(sched_total(20000, 30), 600000);
	CHECK_EQ_INT(sched_total(3, 0.5), 1);
	CHECK_EQ_INT(sched_total(0.5, 1), 1);
	CHECK_EQ_INT(sched_total(1000, 0.0015), 1);
	CHECK_EQ_INT(sched_total(7, 10), 70);
}

static void test_single_thread(void)
{
	struct sched s;
	sched_init(&s, 1000, 1000, 5000, 0, 1);
	CHECK_EQ_INT(s.count, 5000);
	CHECK_EQ_INT(sched_intended(&s, 0), 1000);
	CHECK_EQ_INT(sched_intended(&s, 1), 1000 + 1000000);
	CHECK_EQ_INT(sched_intended(&s, 4999), 1000 + 4999LL * 1000000);
	CHECK_EQ_INT(sched_due(&s, 999), 0);
	CHECK_EQ_INT(sched_due(&s, 1000), 1);
	CHECK_EQ_INT(sched_due(&s, 1000 + 999999), 1);
	CHECK_EQ_INT(sched_due(&s, 1000 + 1000000), 2);
	sched_advance(&s, 2);
	CHECK_EQ_INT(sched_due(&s, 1000 + 1000000), 0);
	CHECK_EQ_INT(sched_next_time(&s), 1000 + 2000000);
	/* a 200 ms stall: everything in it is due at once */
	CHECK_EQ_INT(sched_due(&s, 1000 + 201000000), 200);
	/* never beyond the end */
	CHECK_EQ_INT(sched_due(&s, 1000LL * 1000 * 1000 * 1000), 4998);
	sched_advance(&s, 4998);
	CHECK_EQ_INT(sched_due(&s, INT64_MAX / 2), 0);
	CHECK_EQ_INT(sched_next_time(&s), INT64_MAX);
}

/* T threads together send every global index exactly once, in time
 * order across threads. */
static void test_partition(void)
{
	const uint64_t total = 1003, T = 4;
	struct sched s[4];
	int64_t *when = calloc(total, sizeof(*when));
	uint64_t sum = 0;
	for (uint64_t k = 0; k < T; k++) {
		sched_init(&s[k], 0, 3000, total, k, T);
		sum += s[k].count;
		for (uint64_t i = 0; i < s[k].count; i++)
			when[i * T + k] += sched_intended(&s[k], i) + 1;
	}
	CHECK_EQ_INT(sum, total);
	int bad = 0;
	for (uint64_t g = 0; g < total; g++)
		if (when[g] - 1 != (int64_t)(g * 1000000000ULL / 3000))
			bad++;
	CHECK_EQ_INT(bad, 0);
	free(when);
	/* more threads than packets: the extra ones send nothing */
	struct sched e;
	sched_init(&e, 0, 10, 3, 5, 8);
	CHECK_EQ_INT(e.count, 0);
	CHECK_EQ_INT(sched_due(&e, 1000000000), 0);
}

/* An hour at 1 Mpps: the last packet is due exactly at 3600 s - 1 us. */
static void test_no_drift(void)
{
	struct sched s;
	uint64_t total = sched_total(1e6, 3600);
	sched_init(&s, 5, 1e6, total, 0, 1);
	CHECK_EQ_INT(sched_intended(&s, total - 1), 5 + 3600LL * 1000000000 - 1000);
	CHECK_EQ_INT(sched_due(&s, 5 + 1800LL * 1000000000), 1800000001);
}

/* 0.5 pps and 3 pps: rounding keeps each time within 1 ns. */
static void test_fractional(void)
{
	struct sched s;
	sched_init(&s, 0, 0.5, 4, 0, 1);
	CHECK_EQ_INT(sched_intended(&s, 3), 6000000000LL);
	sched_init(&s, 0, 3, 30, 0, 1);
	CHECK_EQ_INT(sched_intended(&s, 1), 333333333);
	CHECK_EQ_INT(sched_intended(&s, 3), 1000000000);
	CHECK_EQ_INT(sched_due(&s, 333333333), 2);
	CHECK_EQ_INT(sched_due(&s, 333333332), 1);
}

/* Spinning the last 50 us before each packet: the wake-up comes that much
 * early, the wait never outlasts the margin and stops at the intended
 * time, and a late wake-up does not wait at all. */
static void test_spin(void)
{
	struct sched s;
	sched_init(&s, 1000, 1000, 3, 0, 1);
	CHECK_EQ_INT(sched_wake_time(&s, 0), 1000);
	CHECK_EQ_INT(sched_wake_time(&s, 50000), 1000 - 50000);
	sched_advance(&s, 1);
	CHECK_EQ_INT(sched_wake_time(&s, 50000), 1000 + 1000000 - 50000);
	CHECK_EQ_INT(sched_spin_ns(&s, 1000 + 1000000 - 50000, 50000), 50000);
	CHECK_EQ_INT(sched_spin_ns(&s, 1000 + 1000000 - 20000, 50000), 20000);
	/* woken before the margin (a coarse timer): still at most 50 us */
	CHECK_EQ_INT(sched_spin_ns(&s, 1000, 50000), 50000);
	CHECK_EQ_INT(sched_spin_ns(&s, 1000 + 1000000, 50000), 0);
	CHECK_EQ_INT(sched_spin_ns(&s, 1000 + 1000007, 50000), 0);
	CHECK_EQ_INT(sched_spin_ns(&s, 1000 + 999999, 0), 0);
	sched_advance(&s, 2);
	CHECK_EQ_INT(sched_wake_time(&s, 50000), INT64_MAX);
	CHECK_EQ_INT(sched_spin_ns(&s, 0, 50000), 0);
}

int main(void)
{
	test_total();
	test_single_thread();
	test_partition();
	test_no_drift();
	test_fractional();
	test_spin();
	return check_done();
}
