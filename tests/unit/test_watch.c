/*
 * watch: a group's throttled spans from its cpu.stat readings, the loops'
 * late ticks and data wake-ups through their rings (stats_late_read), each
 * with its kind (a late AF_UNIX datagram from a sender that is not
 * real-time is non_rt_sender), and which late wake-ups overlapped which
 * group's throttling, counted once each by kind, across a reload that
 * keeps, moves or drops groups.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "stats.h"
#include "watch.h"

#define MS	1000000LL

static struct watch w;
static struct conf c;

/* Watch groups named by names (their directories made up: the readings
 * below are handed in, not read). */
static void configure(const char *const *names, int n,
		      struct stats *const *loops, int nloops)
{
	c.nwatch = n;
	c.late_us = 5000;
	c.watch_interval_ms = 10;
	for (int i = 0; i < n; i++) {
		snprintf(c.watch[i].name, sizeof(c.watch[i].name), "%s", names[i]);
		snprintf(c.watch[i].dir, sizeof(c.watch[i].dir), "/cg/%s",
			 names[i]);
	}
	watch_configure(&w, &c, loops, nloops);
}

static void reading(int g, uint64_t periods, uint64_t throttled,
		    uint64_t throttled_us, int64_t at)
{
	struct cg_stat st = { .nr_periods = periods, .nr_throttled = throttled,
			      .throttled_us = throttled_us };
	watch_reading(&w, g, &st, at);
}

/* Group g's late wake-ups while it was throttled, every kind. */
static uint64_t late_all(int g)
{
	uint64_t n = 0;
	for (int k = 0; k < STATS_NWAKEUPS; k++)
		n += w.g[g].late[k];
	return n;
}

static void test_spans(void)
{
	const char *const names[] = { "loadgen.slice", "other.slice" };
	memset(&w, 0, sizeof(w));
	configure(names, 2, NULL, 0);
	/* First readings are a base, not a throttle, however large. */
	reading(0, 100, 50, 900000, 1000 * MS);
	reading(1, 100, 0, 0, 1000 * MS);
	CHECK_EQ_INT(w.g[0].nspan, 0);
	/* A late wake-up long before any throttle (the one below began
	 * after 1010 - 200 ms). */
	watch_late(&w, 800 * MS, 20 * MS, W_tick);
	reading(0, 101, 50, 900000, 1010 * MS);
	reading(1, 101, 0, 0, 1010 * MS);
	CHECK_EQ_INT(late_all(0), 0);
	/* A throttle of 200 ms that ended before 1220 ms: the span reaches
	 * back to 1010 - 200 ms, so a wake-up late from 1100 to 1215 counts,
	 * though it was noted before the reading that shows the throttle. */
	watch_late(&w, 1215 * MS, 115 * MS, W_datagram);
	reading(0, 103, 52, 1100000, 1220 * MS);
	reading(1, 103, 0, 0, 1220 * MS);
	CHECK_EQ_INT(w.g[0].nspan, 1);
	CHECK_EQ_INT(w.g[0].span[0].from_ns, 810 * MS);
	CHECK_EQ_INT(w.g[0].span[0].to_ns, 1220 * MS);
	CHECK_EQ_INT(late_all(0), 1);
	CHECK_EQ_INT(w.g[0].late[W_datagram], 1);
	CHECK_EQ_INT(late_all(1), 0);
	/* nr_throttled alone (a throttle still on) is a span too; a wake-up
	 * in it after it was seen counts at once, and only once however many
	 * spans it overlaps. */
	reading(0, 104, 53, 1100000, 1230 * MS);
	watch_late(&w, 1229 * MS, 30 * MS, W_tick);
	CHECK_EQ_INT(late_all(0), 2);
	reading(0, 105, 54, 1110000, 1240 * MS);
	CHECK_EQ_INT(late_all(0), 2);
	/* Out of every span: no count. */
	reading(0, 106, 54, 1110000, 1250 * MS);
	watch_late(&w, 1249 * MS + 500000, 1 * MS, W_tick);
	CHECK_EQ_INT(late_all(0), 2);
	/* The group made anew (its counts went back): a new base. */
	reading(0, 1, 0, 0, 1260 * MS);
	CHECK_EQ_INT(w.g[0].nspan, 3);
	reading(0, 2, 1, 100, 1270 * MS);
	CHECK_EQ_INT(w.g[0].nspan, 4);

	/* A reload that moves loadgen.slice second and drops the other:
	 * its count and spans stay, and what it counted is not counted
	 * again when a new span overlaps it. */
	const char *const next[] = { "new.slice", "loadgen.slice" };
	configure(next, 2, NULL, 0);
	CHECK_EQ_INT(late_all(1), 2);
	CHECK_EQ_INT(w.g[1].nspan, 4);
	CHECK_EQ_INT(late_all(0), 0);
	CHECK_EQ_INT(w.g[0].read_ns, 0);
	CHECK(strcmp(w.g[0].name, "new.slice") == 0);
	reading(1, 3, 2, 400000, 1280 * MS);	/* reaches back 400 ms */
	/* Of the four wake-ups it overlaps, the one at 1249 ms is new (it
	 * overlapped no span before); the two counted are not again. */
	CHECK_EQ_INT(late_all(1), 3);
	CHECK_EQ_INT(w.g[1].late[W_tick], 2);
	CHECK_EQ_INT(w.g[1].late[W_datagram], 1);
	/* The new group's first reading is its base. */
	reading(0, 5, 5, 5000, 1280 * MS);
	CHECK_EQ_INT(w.g[0].nspan, 0);
}

/* stats_late_read: in order, from where the reader was, with what the
 * ring lost counted (a reader a whole ring behind loses the oldest too:
 * the loop may be writing it); a tick or wake-up under late_us is not
 * noted, and each noted one says what it was. */
static void test_ring(void)
{
	static struct stats s;
	struct stats_late got[STATS_LATE_RING];
	uint64_t cursor = 0, lost = 0;
	CHECK_EQ_INT(stats_init(&s, 0), 0);
	s.late_us = 5000;
	stats_record_tick(&s, 4999);
	stats_record_tick(&s, 100);
	stats_record_wake(&s, W_datagram, 4999, 0);
	CHECK_EQ_INT(stats_late_read(&s, &cursor, got, 8, &lost), 0);
	stats_record_tick(&s, 5000);
	stats_record_tick(&s, 7000);
	stats_record_wake(&s, W_stream, 9000, 0);
	CHECK_EQ_INT(stats_late_read(&s, &cursor, got, 8, &lost), 3);
	CHECK_EQ_INT(got[0].late_ns, 5000000);
	CHECK_EQ_INT(got[1].late_ns, 7000000);
	CHECK_EQ_INT(got[0].kind, W_tick);
	CHECK_EQ_INT(got[2].kind, W_stream);
	CHECK(got[1].end_ns >= got[0].end_ns && got[0].end_ns > 0);
	CHECK_EQ_INT(s.late_wakeups[W_tick], 2);
	CHECK_EQ_INT(s.late_wakeups[W_stream], 1);
	CHECK_EQ_INT(hist_count(&s.wake), 2);
	for (int i = 0; i < STATS_LATE_RING + 10; i++)
		stats_record_tick(&s, 6000 + i);
	int n = stats_late_read(&s, &cursor, got, STATS_LATE_RING, &lost);
	CHECK_EQ_INT(n, STATS_LATE_RING - 1);
	CHECK_EQ_INT(lost, 11);
	CHECK_EQ_INT(got[0].late_ns, 6011000);
	CHECK_EQ_INT(cursor, 3 + STATS_LATE_RING + 10);
	stats_free(&s);
}

/* A late datagram is the sender's kind as its policy says: a sender
 * that is not real-time (this process, SCHED_OTHER) makes it
 * non_rt_sender; one that is not there (a child that has exited and been
 * reaped), or none (UDP: 0), leaves it a datagram. One under late_us
 * asks nothing. */
static void test_sender(void)
{
	static struct stats s;
	struct stats_late got[8];
	uint64_t cursor = 0, lost = 0;
	CHECK_EQ_INT(stats_init(&s, 0), 0);
	s.late_us = 5000;
	CHECK_EQ_INT(sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, SCHED_OTHER);
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	CHECK(gone > 0 && waitpid(gone, NULL, 0) == gone);
	stats_record_wake(&s, W_datagram, 20000, getpid());
	stats_record_wake(&s, W_datagram, 20000, gone);
	stats_record_wake(&s, W_datagram, 20000, 0);
	stats_record_wake(&s, W_datagram, 100, getpid());
	CHECK_EQ_INT(stats_late_read(&s, &cursor, got, 8, &lost), 3);
	CHECK_EQ_INT(got[0].kind, W_non_rt_sender);
	CHECK_EQ_INT(got[1].kind, W_datagram);
	CHECK_EQ_INT(got[2].kind, W_datagram);
	CHECK_EQ_INT(s.late_wakeups[W_non_rt_sender], 1);
	CHECK_EQ_INT(s.late_wakeups[W_datagram], 2);
	CHECK_EQ_INT(hist_count(&s.wake), 4);
	stats_free(&s);
}

/* A loop noting late wake-ups while the main thread reads them (TSan:
 * the ring is the only state the two share). */
static struct stats shared;
static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		if (i % 2)
			stats_record_tick(&shared, 5000 + i % 100);
		else
			stats_record_wake(&shared, W_datagram, 5000 + i % 100, 0);
	return NULL;
}

static void test_threads(void)
{
	struct stats_late got[64];
	uint64_t cursor = 0, lost, seen = 0, lost_all = 0;
	pthread_t t;
	CHECK_EQ_INT(stats_init(&shared, 0), 0);
	shared.late_us = 5000;
	CHECK_EQ_INT(pthread_create(&t, NULL, writer, NULL), 0);
	for (int rounds = 0; rounds < 1000000 && seen + lost_all < 20000;
	     rounds++) {
		int n = stats_late_read(&shared, &cursor, got, 64, &lost);
		for (int i = 0; i < n; i++) {
			CHECK(got[i].late_ns >= 5000000 && got[i].late_ns < 5100000);
			/* The kind is the note's own: ticks had odd lateness. */
			CHECK_EQ_INT(got[i].kind, got[i].late_ns / 1000 % 2 ?
				     W_tick : W_datagram);
		}
		seen += (uint64_t)n;
		lost_all += lost;
	}
	pthread_join(t, NULL);
	int n;
	while ((n = stats_late_read(&shared, &cursor, got, 64, &lost)) > 0 ||
	       lost) {
		seen += (uint64_t)n;
		lost_all += lost;
	}
	CHECK_EQ_INT(seen + lost_all, 20000);
	stats_free(&shared);
}

/* A group that is not there, or not a cgroup v2 directory with the cpu
 * controller, is refused naming it and what is wrong. */
static void refused(const char *name, const char *want)
{
	char dir[1024], err[512] = "";
	CHECK_EQ_INT(cg_watch_dir(name, dir, sizeof(dir), err, sizeof(err)), -1);
	if (!strstr(err, want))
		fprintf(stderr, "%s: got '%s', expected '%s'\n", name, err, want);
	CHECK(strstr(err, want) != NULL);
}

static void test_refused(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	bool v2 = false;
	while (f && fgets(line, sizeof(line), f))
		v2 |= strstr(line, " - cgroup2 ") != NULL;
	if (f)
		fclose(f);
	if (!v2) {
		refused("loadgen.slice", "no cgroup v2 hierarchy is mounted");
		return;
	}
	refused("no-such-relay-test.slice", "'no-such-relay-test.slice': no cgroup ");
	refused("no-such-relay-test.slice", "start the slice");
	refused("/no/such/relay/test", "'/no/such/relay/test': no cgroup ");
	refused("/proc", "'/proc': /proc is not a cgroup v2 directory");
	refused("loadgen", "'loadgen' is not a slice (NAME.slice) nor a path");
	refused("-.slice", "is not a slice");
}

int main(void)
{
	test_refused();
	test_spans();
	test_ring();
	test_sender();
	test_threads();
	return check_done();
}
