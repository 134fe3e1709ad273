/* Unit tests for loadgen sweep --search's decisions, driven by scripted
 * outcomes instead of runs: the doubling and the bisection to the
 * resolution, the stop at --to, a miss at --from, loadgen's own limit,
 * and over several independent searches the median with the interval
 * over them, searches that disagree (some found a capacity, some none)
 * said as unstable with the fraction, every rate's share of runs that met
 * and a non-monotonic set of outcomes said as such. */
#include "check.h"
#include "../../loadgen/search.h"

#include <math.h>
#include <string.h>

/* A target that meets its objectives up to knee pps; loadgen sends at
 * most sender_max pps (0: any rate). */
struct script {
	double knee, sender_max;
};

/* Run search s to its end against t; its trials go to out (room for
 * max) as search number k. Returns how many. */
static int drive(struct search *s, const struct script *t, int k,
		 struct search_trial *out, int max)
{
	int n = 0;
	while (s->end == SEARCH_RUNNING && n < max) {
		enum search_outcome o = t->sender_max && s->rate > t->sender_max
			? SEARCH_SENDER : s->rate <= t->knee ? SEARCH_MET
			: SEARCH_MISSED;
		out[n++] = (struct search_trial){ k, s->rate, o };
		search_step(s, o, o == SEARCH_SENDER ? t->sender_max : s->rate);
	}
	return n;
}

static void test_bisection(void)
{
	struct search s;
	struct search_trial t[64];
	struct script knee = { 5000, 0 };
	search_start(&s, 1000, 20000, 5);
	int n = drive(&s, &knee, 1, t, 64);
	/* 1000, 2000, 4000 met; 8000 missed; then halves: 6000, 5000, 5500,
	 * 5250, and 5000..5250 is within 5 % of 5000 */
	double want[] = { 1000, 2000, 4000, 8000, 6000, 5000, 5500, 5250 };
	CHECK_EQ_INT(n, 8);
	for (int i = 0; i < n && i < 8; i++)
		CHECK(t[i].rate == want[i]);
	CHECK(s.end == SEARCH_FOUND && s.met == 5000 && s.missed == 5250);
	CHECK(search_capacity(&s) == 5000);
	CHECK(strcmp(search_end_name(s.end), "found") == 0);

	/* any knee: the capacity is at or below it, the first miss above
	 * it, the two within the resolution, in a bounded number of steps */
	for (double k = 1000; k < 20000; k += 137) {
		struct script any = { k, 0 };
		for (double res = 0.5; res <= 20; res *= 2) {
			search_start(&s, 1000, 20000, res);
			n = drive(&s, &any, 1, t, 64);
			CHECK(s.end == SEARCH_FOUND);
			CHECK(s.met <= k && s.missed > k);
			CHECK(s.missed - s.met <= s.met * res / 100);
			CHECK(n < 20);
		}
	}
	/* whole datagrams per second while the gap is over 2 pps */
	struct script odd = { 5300, 0 };
	search_start(&s, 1001, 20000, 1);
	n = drive(&s, &odd, 1, t, 64);
	CHECK(s.end == SEARCH_FOUND && n > 8);
	for (int i = 0; i < n; i++)
		CHECK(t[i].rate == round(t[i].rate));
	/* fractions of a datagram per second, once the gap is that small */
	struct script slow = { 1.3, 0 };
	search_start(&s, 1, 100, 1);
	drive(&s, &slow, 1, t, 64);
	CHECK(s.end == SEARCH_FOUND && s.met <= 1.3 && s.missed > 1.3 &&
	      s.missed - s.met <= 0.01 * s.met);
}

static void test_ends(void)
{
	struct search s;
	struct search_trial t[64];
	char buf[512];

	/* every step met: it stops at --to and says it may go no higher */
	struct script all = { 1e9, 0 };
	search_start(&s, 1000, 20000, 5);
	int n = drive(&s, &all, 1, t, 64);
	CHECK_EQ_INT(n, 6);		/* 1000 .. 16000, then 20000 */
	CHECK(t[n - 1].rate == 20000 && s.end == SEARCH_AT_TO);
	for (int i = 0; i < n; i++)
		CHECK(t[i].rate <= 20000);
	CHECK(search_capacity(&s) == 20000);
	search_verdict(&s, 1, true, "p90 <= 5 ms", buf, sizeof(buf));
	CHECK(strstr(buf, "capacity at least 20000 pps") == buf);
	CHECK(strstr(buf, "ceiling: --to 20000 pps met in 1 of 1 searches"));

	/* the first step missed: no capacity, below --from */
	struct script none = { 500, 0 };
	search_start(&s, 1000, 20000, 5);
	n = drive(&s, &none, 1, t, 64);
	CHECK(n == 1 && s.end == SEARCH_NONE && search_capacity(&s) == 0);
	search_verdict(&s, 1, true, "p90 <= 5 ms", buf, sizeof(buf));
	CHECK(strcmp(buf, "capacity none: below --from 1000 pps (it missed in "
		     "1 of 1 searches), resolution 5 %, p90 <= 5 ms") == 0);

	/* loadgen cannot send 8000 pps while the target keeps up: a ceiling
	 * of loadgen's, and 4000 pps is only a lower bound */
	struct script sender = { 1e9, 7000 };
	search_start(&s, 1000, 20000, 5);
	n = drive(&s, &sender, 1, t, 64);
	CHECK(s.end == SEARCH_AT_SENDER && s.met == 4000 && s.ceiling == 8000);
	search_verdict(&s, 1, true, "p90 <= 5 ms", buf, sizeof(buf));
	CHECK(strstr(buf, "capacity at least 4000 pps") == buf);
	CHECK(strstr(buf, "at 8000 pps loadgen sent 7000 pps while the target "
		     "kept up (1 of 1 searches): the load generator, not the "
		     "target, is the limit"));
	search_text(&s, buf, sizeof(buf));
	CHECK(strstr(buf, "4000 pps met; at 8000 pps loadgen sent 7000"));

	/* found: one search's verdict names the rate that missed */
	struct script knee = { 4900, 0 };
	search_start(&s, 1000, 20000, 5);
	drive(&s, &knee, 1, t, 64);
	search_verdict(&s, 1, true, "p99.9 <= 2 ms", buf, sizeof(buf));
	CHECK(strcmp(buf, "capacity 4875 pps (5000 missed), resolution 5 %, "
		     "p99.9 <= 2 ms") == 0);

	/* interrupted before any search ended */
	s.end = SEARCH_STOPPED;
	search_verdict(&s, 1, true, "p90 <= 5 ms", buf, sizeof(buf));
	CHECK(strstr(buf, "capacity unknown: interrupted"));
}

static void test_searches(void)
{
	struct search s[4];
	struct search_trial t[256];
	struct search_rate r[256];
	struct search_summary m;
	char buf[512];
	int n = 0;
	/* three searches of a target whose knee moved: 4750, 5000, 4875
	 * found (knees 4800, 5100, 4900) */
	struct script knees[] = { { 4800, 0 }, { 5100, 0 }, { 4900, 0 } };
	for (int k = 0; k < 3; k++) {
		search_start(&s[k], 1000, 20000, 5);
		n += drive(&s[k], &knees[k], k + 1, t + n, 256 - n);
	}
	search_summarize(s, 3, &m);
	CHECK(m.n == 3 && m.median == 4875 && m.min == 4750 && m.max == 5000);
	CHECK(!m.at_least && m.none == 0 && m.found == 3 && !m.unstable);
	CHECK(m.confidence == 0.75);
	int bad[256], top;
	int nb = search_nonmonotonic(t, n, bad, &top);
	search_verdict(s, 3, nb == 0, "p99.9 <= 2 ms", buf, sizeof(buf));
	/* 5000 met in search 2; search 1 missed 4875 below it */
	CHECK_EQ_INT(nb, 1);
	CHECK(t[top].rate == 5000 && t[top].search == 2);
	CHECK(t[bad[0]].rate == 4875 && t[bad[0]].search == 1);
	CHECK(strcmp(buf, "capacity 4875 pps (median of 3 independent "
		     "searches, 4750-5000 over them), resolution 5 %, p99.9 <= "
		     "2 ms; not monotonic: a rate missed below one that met (see "
		     "the rates)") == 0);
	/* every rate tried, ascending, with its runs and how many met */
	int nr = search_rates(t, n, r);
	for (int i = 1; i < nr; i++)
		CHECK(r[i - 1].rate < r[i].rate);
	for (int i = 0; i < nr; i++) {
		if (r[i].rate == 1000)
			CHECK(r[i].runs == 3 && r[i].met == 3);
		if (r[i].rate == 5000)
			CHECK(r[i].runs == 3 && r[i].met == 1);
		if (r[i].rate == 8000)
			CHECK(r[i].runs == 3 && r[i].met == 0);
	}

	/* a doctored sequence: search 2 misses 4750 below the 5000 that
	 * search 1 met, and a sender's shortfall is not a miss */
	struct search_trial d[] = {
		{ 1, 4000, SEARCH_MET }, { 1, 5000, SEARCH_MET },
		{ 1, 5250, SEARCH_MISSED }, { 2, 4000, SEARCH_SENDER },
		{ 2, 4750, SEARCH_MISSED }, { 2, 4500, SEARCH_MET },
	};
	nb = search_nonmonotonic(d, 6, bad, &top);
	CHECK(nb == 1 && d[bad[0]].rate == 4750 && d[bad[0]].search == 2);
	CHECK(d[top].rate == 5000 && d[top].search == 1);
	/* in order of rate, and nothing when every miss is above every met */
	struct search_trial e[] = {
		{ 1, 6000, SEARCH_MET }, { 1, 5500, SEARCH_MISSED },
		{ 2, 4500, SEARCH_MISSED }, { 2, 7000, SEARCH_MISSED },
	};
	nb = search_nonmonotonic(e, 4, bad, &top);
	CHECK(nb == 2 && e[bad[0]].rate == 4500 && e[bad[1]].rate == 5500);
	CHECK_EQ_INT(search_nonmonotonic(e + 3, 1, bad, &top), 0);
	CHECK_EQ_INT(top, -1);

	/* an even count: the lower middle of the found ones; an
	 * interrupted search does not count */
	struct script k4 = { 5300, 0 };
	search_start(&s[3], 1000, 20000, 5);
	drive(&s[3], &k4, 4, t, 256);
	search_summarize(s, 4, &m);
	CHECK(m.n == 4 && m.found == 4 && m.median == 4875 && m.max == s[3].met);
	CHECK(m.confidence == 0.875);
	s[1].end = SEARCH_STOPPED;
	search_summarize(s, 4, &m);
	CHECK(m.n == 3 && m.median == 4875 && m.min == 4750);
}

/* Independent searches that disagree: some found a capacity, some missed
 * --from. No single number then, nor a median that depends on how many
 * fell on each side: "unstable", the fraction that found one, and the
 * interval of those. The same on every side of the split, and the
 * rule's edges: all none is "none", one search has no interval. */
static void test_unstable(void)
{
	struct search s[5];
	struct search_trial t[256];
	struct search_summary m;
	char buf[512];
	struct script found[] = { { 4800, 0 }, { 5100, 0 } };
	struct script none = { 500, 0 };
	for (int nf = 0; nf <= 5; nf++) {
		for (int k = 0; k < 5; k++) {
			search_start(&s[k], 1000, 20000, 5);
			drive(&s[k], k < nf ? &found[k % 2] : &none, k + 1, t, 256);
		}
		search_summarize(s, 5, &m);
		CHECK(m.n == 5 && m.found == nf && m.none == 5 - nf);
		CHECK(m.unstable == (nf > 0 && nf < 5));
		search_verdict(s, 5, true, "p90 <= 5 ms", buf, sizeof(buf));
		if (nf == 0) {
			CHECK(m.median == 0 && m.min == 0 && m.confidence == 0);
			CHECK(strstr(buf, "capacity none: below --from 1000 pps (it "
				     "missed in 5 of 5 searches)") == buf);
		} else if (nf == 5) {
			CHECK(m.median > 0 && m.mid && !m.unstable);
			CHECK(strstr(buf, "capacity 4750 pps (median of 5 independent "
				     "searches, 4750-5000 over them)") == buf);
		} else {
			/* no median, whichever side has more */
			CHECK(m.median == 0 && m.mid == NULL && !m.at_least);
			CHECK(m.min == 4750 && m.max == (nf > 1 ? 5000 : 4750));
			CHECK(strstr(buf, "capacity unstable: found in ") == buf);
			char want[128];
			snprintf(want, sizeof(want), "found in %d of 5 independent "
				 "searches (%s pps), none in %d (--from 1000 pps "
				 "missed)", nf, nf > 1 ? "4750-5000" : "4750", 5 - nf);
			CHECK(strstr(buf, want) != NULL);
		}
	}
	/* one search: found or none, never unstable, no interval */
	search_summarize(s, 1, &m);
	CHECK(m.n == 1 && m.found == 1 && !m.unstable && m.confidence == 0);
	search_verdict(s, 1, true, "p90 <= 5 ms", buf, sizeof(buf));
	CHECK(strstr(buf, "capacity 4750 pps (4875 missed)") == buf);
	/* loadgen's own limit at --from says nothing of the target: neither
	 * found nor none, so it splits nothing */
	struct script sender = { 1e9, 500 };
	search_start(&s[1], 1000, 20000, 5);
	drive(&s[1], &sender, 2, t, 256);
	CHECK(s[1].end == SEARCH_AT_SENDER && search_capacity(&s[1]) == 0);
	search_summarize(s, 2, &m);
	CHECK(m.n == 2 && m.found == 1 && m.none == 0 && !m.unstable);
	CHECK(m.median == 4750);
}

/* A warm start near an earlier capacity: the same answer within the
 * resolution in fewer steps than doubling from --from, whichever side of
 * the knee it starts on; a miss all the way down to --from is "none". */
static void test_warm(void)
{
	struct search s;
	struct search_trial t[64];
	struct script knee = { 5000, 0 };
	search_start(&s, 1000, 20000, 5);
	int cold = drive(&s, &knee, 1, t, 64);

	/* from below: 4875 met, 5850 (x 1.2) missed, then it bisects */
	search_start_warm(&s, 1000, 20000, 5, 4875);
	int n = drive(&s, &knee, 1, t, 64);
	CHECK(t[0].rate == 4875 && t[0].out == SEARCH_MET);
	CHECK(t[1].rate == 5850 && t[1].out == SEARCH_MISSED);
	CHECK(s.end == SEARCH_FOUND && s.met <= 5000 && s.missed > 5000);
	CHECK(s.missed - s.met <= s.met * 0.05);
	CHECK(n < cold);

	/* from above: down by 1.2, then 1.44, until one meets */
	search_start_warm(&s, 1000, 20000, 5, 8000);
	n = drive(&s, &knee, 1, t, 64);
	CHECK(t[0].rate == 8000 && t[1].rate == 6667 && t[2].rate == 4630);
	CHECK(t[2].out == SEARCH_MET);
	CHECK(s.end == SEARCH_FOUND && s.met <= 5000 && s.missed > 5000);
	CHECK(n < cold);

	/* nothing meets: down to --from, then none, as a cold search says */
	struct script low = { 500, 0 };
	search_start_warm(&s, 1000, 20000, 5, 4000);
	n = drive(&s, &low, 1, t, 64);
	CHECK(s.end == SEARCH_NONE && search_capacity(&s) == 0);
	CHECK(t[n - 1].rate == 1000 && n <= 6);
	for (int i = 1; i < n; i++)
		CHECK(t[i].rate < t[i - 1].rate);

	/* a start outside --from..--to is clamped; --to met is the ceiling */
	struct script high = { 1e9, 0 };
	search_start_warm(&s, 1000, 20000, 5, 50000);
	n = drive(&s, &high, 1, t, 64);
	CHECK(n == 1 && t[0].rate == 20000 && s.end == SEARCH_AT_TO);

	/* any knee, any start from a quarter to four times it: found within
	 * the resolution, in whole pps while the steps are over 2 pps */
	for (double k = 1000; k < 19000; k += 211) {
		struct script any = { k, 0 };
		for (double f = 0.25; f <= 4; f *= 1.5) {
			search_start_warm(&s, 1000, 20000, 5, k * f);
			n = drive(&s, &any, 1, t, 64);
			CHECK(s.end == SEARCH_FOUND || (s.end == SEARCH_NONE && k < 1000));
			CHECK(s.met <= k && s.missed > k);
			CHECK(s.missed - s.met <= s.met * 0.05);
			CHECK(n < 16);
			for (int i = 1; i < n; i++)
				if (fabs(t[i].rate - t[i - 1].rate) > 4)
					CHECK(t[i].rate == round(t[i].rate));
		}
	}
}

int main(void)
{
	test_bisection();
	test_ends();
	test_searches();
	test_unstable();
	test_warm();
	return check_done();
}
