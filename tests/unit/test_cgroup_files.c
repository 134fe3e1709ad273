/* Unit tests for lib/cgroup's readers on files this test writes (no root,
 * no cgroup needed): the hierarchy from a mount table and a task's cgroup
 * list (escaped paths, subtree mounts, v1 before v2, lines too long), the
 * cgroup a task's list names (controller lists such as cpuset,cpu),
 * the quota knobs of both versions and cpu.stat, each with the garbage a
 * reader must refuse rather than turn into a number the file never said
 * (signs, overflow, trailing text, a line cut at the buffer's end). */
#include "check.h"
#include "cgroup.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[4096];

static const char *put(const char *name, const char *text)
{
	static char path[4][4200];
	static int next;
	char *p = path[next++ % 4];
	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(p);
		exit(1);
	}
	return p;
}

#define V2_MOUNT "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"

/* The directory cg_task_path_in finds, or "-" when it fails. */
static const char *task_path(const char *mountinfo, const char *cgroup)
{
	static char out[4096];
	if (cg_task_path_in(put("mountinfo", mountinfo), put("cgroup", cgroup),
			    out, sizeof(out)) < 0)
		return "-";
	return out;
}

static void test_task_path(void)
{
	CHECK(!strcmp(task_path(V2_MOUNT, "0::/user.slice/a.scope\n"),
		      "/sys/fs/cgroup/user.slice/a.scope"));
	CHECK(!strcmp(task_path(V2_MOUNT, "0::/\n"), "/sys/fs/cgroup"));
	/* v1 with the cpu controller wins over cgroup2; cpuset is not cpu */
	CHECK(!strcmp(task_path(
		"40 1 0:30 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
		V2_MOUNT
		"41 1 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
		"5:cpuset:/x\n4:cpu,cpuacct:/demo\n0::/y\n"),
		"/sys/fs/cgroup/cpu,cpuacct/demo"));
	/* escaped blanks in the mount point */
	CHECK(!strcmp(task_path("30 1 0:26 / /mnt/my\\040cg rw - cgroup2 none rw\n",
				"0::/a\n"), "/mnt/my cg/a"));
	/* a mount of a subtree: below its root, and not a sibling sharing
	 * a prefix of its name */
	const char *sub = "30 1 0:26 /foo /mnt/cg rw - cgroup2 none rw\n";
	CHECK(!strcmp(task_path(sub, "0::/foo/x\n"), "/mnt/cg/x"));
	CHECK(!strcmp(task_path(sub, "0::/foo\n"), "/mnt/cg"));
	CHECK(!strcmp(task_path(sub, "0::/foobar/x\n"), "-"));
	/* a line longer than any buffer: its tail is not a line of its own */
	size_t n = 20000;
	char *big = malloc(n + 200);
	memset(big, 'a', n);
	strcpy(big + n, " 30 1 0:26 / /evil rw - cgroup2 none rw\n");
	CHECK(!strcmp(task_path(big, "0::/a\n"), "-"));
	/* a directory that does not fit is no directory */
	memset(big, 'b', n);
	big[0] = '/';
	strcpy(big + n, "\n");
	char *cgroup = malloc(n + 10);
	snprintf(cgroup, n + 10, "0::%s", big);
	CHECK(!strcmp(task_path(V2_MOUNT, cgroup), "-"));
	free(cgroup);
	free(big);
	CHECK(!strcmp(task_path("", "0::/a\n"), "-"));
	CHECK(!strcmp(task_path(V2_MOUNT, "garbage\n"), "-"));
	CHECK(!strcmp(task_path(V2_MOUNT, "0::0a\n"), "-"));
}

static int quota(int version, const char *a, const char *b, int64_t *q,
		 int64_t *p)
{
	struct cg cg = { .version = version };
	snprintf(cg.path, sizeof(cg.path), "%s", dir);
	put(version == 2 ? "cpu.max" : "cpu.cfs_quota_us", a);
	put("cpu.cfs_period_us", b);
	*q = *p = 12345;
	return cg_get_quota(&cg, q, p);
}

static void test_quota(void)
{
	int64_t q, p;
	CHECK(quota(2, "max 100000\n", "", &q, &p) == 0 && q == -1 && p == 100000);
	CHECK(quota(2, "50000 100000\n", "", &q, &p) == 0 && q == 50000 &&
	      p == 100000);
	CHECK(quota(1, "-1\n", "100000\n", &q, &p) == 0 && q == -1 && p == 100000);
	CHECK(quota(1, "20000\n", "50000\n", &q, &p) == 0 && q == 20000 &&
	      p == 50000);
	/* what no kernel writes is no quota */
	const char *bad[] = { "-5 100000\n", "99999999999999999999 100000\n",
			      "5 100000 junk\n", "max\n", "maxi 100000\n",
			      "5 +100000\n", "5\n", "", "max 1e5\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(quota(2, bad[i], "", &q, &p) < 0 && q == 12345);
	CHECK(quota(1, "-2\n", "100000\n", &q, &p) < 0);
	CHECK(quota(1, "-1\n", "-100000\n", &q, &p) < 0);
	CHECK(quota(1, "10\n", "18446744073709551615\n", &q, &p) < 0);
}

static void test_stat(void)
{
	struct cg cg = { .version = 2 };
	struct cg_stat st;
	snprintf(cg.path, sizeof(cg.path), "%s", dir);
	put("cpu.stat", "usage_usec 700\nnr_periods 10\nnr_throttled 3\n"
	    "throttled_usec 1500\nnr_bursts 0\n");
	CHECK(cg_read_stat(&cg, &st) == 0 && st.usage_us == 700 &&
	      st.nr_periods == 10 && st.nr_throttled == 3 &&
	      st.throttled_us == 1500);
	/* a sign, an overflow, trailing text: not numbers */
	put("cpu.stat", "nr_periods -1\nnr_throttled 99999999999999999999\n"
	    "throttled_usec 5 x\nusage_usec 9\n");
	CHECK(cg_read_stat(&cg, &st) == 0 && st.nr_periods == 0 &&
	      st.nr_throttled == 0 && st.throttled_us == 0 && st.usage_us == 9);
	/* v1: nanoseconds, and the usage from cpuacct */
	cg.version = 1;
	put("cpu.stat", "nr_periods 4\nnr_throttled 1\nthrottled_time 3000000\n");
	put("cpuacct.usage", "2000000\n");
	CHECK(cg_read_stat(&cg, &st) == 0 && st.throttled_us == 3000 &&
	      st.usage_us == 2000);
	/* a file longer than the reader's buffer: the line it cuts is not
	 * read as a shorter number */
	char big[5000];
	size_t at = 4095 - strlen("nr_periods 12");
	memset(big, ' ', at - 1);
	big[at - 1] = '\n';
	strcpy(big + at, "nr_periods 123456789\n");
	put("cpu.stat", big);
	CHECK(cg_read_stat(&cg, &st) == 0 && st.nr_periods == 0);
}

/* The cgroup cg_task_cgroup_in names, or "-" when it fails. */
static const char *task_cgroup(const char *cgroup)
{
	static char out[64];
	if (cg_task_cgroup_in(put("cgroup", cgroup), out, sizeof(out)) < 0)
		return "-";
	return out;
}

static void test_task_cgroup(void)
{
	CHECK(!strcmp(task_cgroup("0::/user.slice/a.scope\n"), "/user.slice/a.scope"));
	CHECK(!strcmp(task_cgroup("0::/\n"), "/"));
	/* a v1 cpu hierarchy wins over v2, before or after its line, and cpu
	 * is a controller in the list wherever it stands; cpuset and cpuacct
	 * are not cpu */
	CHECK(!strcmp(task_cgroup("5:cpuset,cpu:/x\n0::/y\n"), "/x"));
	CHECK(!strcmp(task_cgroup("0::/y\n4:cpuacct,cpu:/c\n"), "/c"));
	CHECK(!strcmp(task_cgroup("4:cpu,cpuacct:/demo\n0::/\n"), "/demo"));
	CHECK(!strcmp(task_cgroup("5:cpuset:/x\n3:cpuacct:/z\n0::/y\n"), "/y"));
	CHECK(!strcmp(task_cgroup("1:name=systemd:/a\n"), "-"));
	CHECK(!strcmp(task_cgroup("0::relative\n"), "-"));
	CHECK(!strcmp(task_cgroup("garbage\n"), "-"));
	CHECK(!strcmp(task_cgroup(""), "-"));
	/* a path that does not fit is refused, not cut */
	char longer[200];
	snprintf(longer, sizeof(longer), "0::/%0100d\n", 0);
	CHECK(!strcmp(task_cgroup(longer), "-"));
}

int main(void)
{
	const char *tmp = getenv("TEST_TMP");
	snprintf(dir, sizeof(dir), "%s/test_cgroup_files.XXXXXX",
		 tmp ? tmp : P_tmpdir);
	if (!mkdtemp(dir))
		CHECK_SKIP("cannot make a temporary directory");
	test_task_path();
	test_task_cgroup();
	test_quota();
	test_stat();
	const char *files[] = { "mountinfo", "cgroup", "cpu.max",
				"cpu.cfs_quota_us", "cpu.cfs_period_us",
				"cpu.stat", "cpuacct.usage" };
	char p[4200];
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		unlink(p);
	}
	rmdir(dir);
	return check_done();
}
