/* Unit tests for lib/clock: the conversions both ways and the slot a
 * periodic loop skips to after missed wake-ups. */
#include "check.h"
#include "clock.h"

static void test_convert(void)
{
	struct timespec ts = clock_ns_ts(3 * 1000000000LL + 7);
	CHECK_EQ_INT(ts.tv_sec, 3);
	CHECK_EQ_INT(ts.tv_nsec, 7);
	CHECK_EQ_INT(clock_ts_ns(&ts), 3 * 1000000000LL + 7);
}

static void test_next_slot(void)
{
	/* not yet past, or due just now: the slot itself */
	CHECK_EQ_INT(clock_next_slot(1000, 900, 100), 1000);
	CHECK_EQ_INT(clock_next_slot(1000, 1000, 100), 1000);
	/* past: the first slot of the same grid after now, never now itself */
	CHECK_EQ_INT(clock_next_slot(1000, 1001, 100), 1100);
	CHECK_EQ_INT(clock_next_slot(1000, 1099, 100), 1100);
	CHECK_EQ_INT(clock_next_slot(1000, 1100, 100), 1200);
	CHECK_EQ_INT(clock_next_slot(1000, 1000 + 5 * 100 + 1, 100), 1600);
	/* a grid that starts long ago, in the units the loops use */
	int64_t period = 250 * 1000, origin = 7;
	int64_t now = clock_ns(CLOCK_MONOTONIC);
	int64_t next = clock_next_slot(origin, now, period);
	CHECK(next > now && next - now <= period);
	CHECK_EQ_INT((next - origin) % period, 0);
}

int main(void)
{
	test_convert();
	test_next_slot();
	return check_done();
}
