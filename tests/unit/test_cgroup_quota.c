/* Unit tests for lib/cgroup's arithmetic, which needs no cgroup: a
 * percentage of one CPU per period as cpu.max's quota (one rounding rule
 * for every program), and what cpu.stat's counters grew by. */
#include "check.h"
#include "cgroup.h"

#include <math.h>

static void test_quota_us(void)
{
	/* whole percentages of the periods the lab uses: exact */
	CHECK_EQ_INT(cg_quota_us(10, 10000), 1000);
	CHECK_EQ_INT(cg_quota_us(5, 20000), 1000);
	CHECK_EQ_INT(cg_quota_us(5, 100000), 5000);
	CHECK_EQ_INT(cg_quota_us(100, 1000000), 1000000);
	/* more than one CPU, and a fraction of a percent */
	CHECK_EQ_INT(cg_quota_us(200, 100000), 200000);
	CHECK_EQ_INT(cg_quota_us(12.5, 100000), 12500);
	CHECK_EQ_INT(cg_quota_us(0.1, 1000000), 1000);
	/* the nearest microsecond, a half away from zero; not cut off */
	CHECK_EQ_INT(cg_quota_us(33, 1050), 347);	/* 346.5 */
	CHECK_EQ_INT(cg_quota_us(33, 1001), 330);	/* 330.33 */
	CHECK_EQ_INT(cg_quota_us(67, 1001), 671);	/* 670.67 */
	CHECK_EQ_INT(cg_quota_us(99.95, 1000), 1000);	/* 999.5 */
	CHECK_EQ_INT(cg_quota_us(99.94, 1000), 999);
	/* what loadgen's --cpu-quota and the lab's ranges allow at most */
	CHECK_EQ_INT(cg_quota_us(100000, 1000000), 1000000000);
	/* zero is a quota (cg_set_quota refuses it); below zero and NaN
	 * are none */
	CHECK_EQ_INT(cg_quota_us(0, 100000), 0);
	CHECK_EQ_INT(cg_quota_us(-1, 100000), -1);
	CHECK_EQ_INT(cg_quota_us(NAN, 100000), -1);
}

static void test_stat_delta(void)
{
	struct cg_stat before = { .nr_periods = 10, .nr_throttled = 3,
				  .throttled_us = 1500, .usage_us = 700 };
	struct cg_stat after = { .nr_periods = 25, .nr_throttled = 9,
				 .throttled_us = 4000, .usage_us = 1700 };
	struct cg_stat d = cg_stat_delta(&before, &after);
	CHECK_EQ_INT(d.nr_periods, 15);
	CHECK_EQ_INT(d.nr_throttled, 6);
	CHECK_EQ_INT(d.throttled_us, 2500);
	CHECK_EQ_INT(d.usage_us, 1000);
	d = cg_stat_delta(&after, &after);
	CHECK(d.nr_periods == 0 && d.nr_throttled == 0 &&
	      d.throttled_us == 0 && d.usage_us == 0);
}

int main(void)
{
	test_quota_us();
	test_stat_delta();
	return check_done();
}
