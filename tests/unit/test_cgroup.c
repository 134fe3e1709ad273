/* Unit tests for lib/cgroup against the real cpu hierarchy of this machine
 * (v1 or v2, whichever carries the cpu controller): create, quota round
 * trip, moving a process and a single thread (read back from
 * /proc/<tid>/cgroup), real throttling in cpu.stat, restoring an existing
 * cgroup's quota, removal on close, and the errors for bad places.
 * Needs root; skipped without it. */
#include "check.h"
#include "cgroup.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char err[1024];

static bool dir_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool in_cgroup(pid_t tid, const char *dir)
{
	char now[4096];
	return cg_task_path(tid, now, sizeof(now)) == 0 && strcmp(now, dir) == 0;
}

static void test_process(void)
{
	struct cg cg;
	if (cg_open(&cg, NULL, "unit", false, err, sizeof(err)) < 0) {
		fprintf(stderr, "cg_open: %s\n", err);
		CHECK(0);
		return;
	}
	CHECK(cg.created);
	CHECK(cg.version == 1 || cg.version == 2);
	CHECK(dir_exists(cg.path));
	CHECK(strstr(cg.path, "relay-unit-") != NULL);
	CHECK(in_cgroup(0, cg.home));

	CHECK(cg_set_quota(&cg, 20000, 100000, err, sizeof(err)) == 0);
	int64_t q = 0, p = 0;
	CHECK(cg_get_quota(&cg, &q, &p) == 0);
	CHECK_EQ_INT(q, 20000);
	CHECK_EQ_INT(p, 100000);
	CHECK(cg_set_quota(&cg, -1, 50000, err, sizeof(err)) == 0);
	CHECK(cg_get_quota(&cg, &q, &p) == 0);
	CHECK_EQ_INT(q, -1);
	CHECK_EQ_INT(p, 50000);

	err[0] = 0;
	CHECK(cg_set_quota(&cg, 500, 100000, err, sizeof(err)) == -1);
	CHECK(strstr(err, "1000 us") != NULL);
	CHECK(cg_set_quota(&cg, 5000, 2000000, err, sizeof(err)) == -1);
	CHECK(strstr(err, "1000000") != NULL);

	CHECK(cg_add_process(&cg, 0, err, sizeof(err)) == 0);
	CHECK(in_cgroup(0, cg.path));

	char path[4096];
	snprintf(path, sizeof(path), "%s", cg.path);
	cg_close(&cg);
	CHECK(!dir_exists(path));
	CHECK(in_cgroup(0, cg.home));
	cg_close(&cg);		/* a second close does nothing */
}

struct spinner {
	_Atomic pid_t tid;
	atomic_bool stop;
};

static void *spin(void *arg)
{
	struct spinner *s = arg;
	s->tid = gettid();
	while (!s->stop)
		;
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* One thread under a tight quota: it is there, the caller is not, and
 * cpu.stat shows it was throttled. */
static void test_thread_throttled(void)
{
	struct cg cg;
	if (cg_open(&cg, NULL, "unit-thr", true, err, sizeof(err)) < 0) {
		fprintf(stderr, "cg_open threaded: %s\n", err);
		CHECK(0);
		return;
	}
	CHECK(cg.threaded);
	CHECK(cg_set_quota(&cg, 1000, 10000, err, sizeof(err)) == 0);

	struct spinner s = { 0 };
	pthread_t th;
	pthread_create(&th, NULL, spin, &s);
	for (int i = 0; i < 1000 && !s.tid; i++)
		sleep_ms(1);
	CHECK(s.tid != 0);
	CHECK(cg_add_thread(&cg, s.tid, err, sizeof(err)) == 0);
	CHECK(in_cgroup(s.tid, cg.path));
	CHECK(!in_cgroup(0, cg.path));

	sleep_ms(400);
	struct cg_stat st;
	CHECK(cg_read_stat(&cg, &st) == 0);
	CHECK(st.nr_periods >= 10);
	CHECK(st.nr_throttled >= 5);
	CHECK(st.throttled_us > 50000);

	s.stop = true;
	pthread_join(th, NULL);
	char path[4096];
	snprintf(path, sizeof(path), "%s", cg.path);
	cg_close(&cg);
	CHECK(!dir_exists(path));
	CHECK(!cg.domain[0]);
}

/* A cgroup that exists already is used as it is and its quota put back. */
static void test_existing(void)
{
	struct cg outer, inner;
	if (cg_open(&outer, NULL, "unit-ext", false, err, sizeof(err)) < 0) {
		CHECK(0);
		return;
	}
	CHECK(cg_set_quota(&outer, 30000, 100000, err, sizeof(err)) == 0);
	CHECK(cg_open(&inner, outer.path, "x", false, err, sizeof(err)) == 0);
	CHECK(!inner.created);
	CHECK(cg_set_quota(&inner, 10000, 50000, err, sizeof(err)) == 0);
	int64_t q, p;
	CHECK(cg_get_quota(&outer, &q, &p) == 0);
	CHECK_EQ_INT(q, 10000);
	cg_close(&inner);
	CHECK(dir_exists(outer.path));
	CHECK(cg_get_quota(&outer, &q, &p) == 0);
	CHECK_EQ_INT(q, 30000);
	CHECK_EQ_INT(p, 100000);
	cg_close(&outer);
}

static void test_errors(void)
{
	struct cg cg;
	err[0] = 0;
	CHECK(cg_open(&cg, "/no/such/cgroup", "x", false, err,
		      sizeof(err)) == -1);
	CHECK(strstr(err, "not a cgroup directory") != NULL);
	CHECK(cg.path[0] == 0);
	cg_close(&cg);
	err[0] = 0;
	CHECK(cg_open(&cg, "relay-no-such-unit.slice", "x", false, err,
		      sizeof(err)) == -1);
	CHECK(strstr(err, "relay.slice/relay-no.slice") != NULL);
	CHECK(strstr(err, "not active") != NULL);
	err[0] = 0;
	CHECK(cg_open(&cg, "/proc/self", "x", false, err, sizeof(err)) == -1);
	CHECK(strstr(err, "not a cgroup directory") != NULL);
}

int main(void)
{
	char home[4096];
	if (getuid() != 0)
		CHECK_SKIP("needs root to create cgroups");
	if (cg_task_path(0, home, sizeof(home)) < 0)
		CHECK_SKIP("no cgroup hierarchy with the cpu controller");
	test_process();
	test_thread_throttled();
	test_existing();
	test_errors();
	return check_done();
}
