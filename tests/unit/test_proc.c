/* Unit tests for lib/proc: the status readers on status files taken from
 * a root shell and from a process stripped of its capabilities
 * (tests/fixtures/proc/), the schedstat reader on a real line, and what
 * each refuses. */
#include "check.h"
#include "proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp[4200];

/* Write text to the test's scratch file and return its path. */
static const char *scratch(const char *text)
{
	FILE *f = fopen(tmp, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		CHECK_SKIP("cannot write a scratch file");
	return tmp;
}

static void test_status_fixtures(void)
{
	char v[64];
	uint64_t caps = 0;
	const char *root = strdup(check_fixture("proc/status-root"));
	CHECK_EQ_INT(proc_status_field(root, "Name", v, sizeof(v)), 0);
	CHECK(strcmp(v, "cat") == 0);
	CHECK_EQ_INT(proc_status_field(root, "Seccomp", v, sizeof(v)), 0);
	CHECK(strcmp(v, "0") == 0);
	CHECK_EQ_INT(proc_status_caps(root, &caps), 0);
	CHECK(caps == 0x000001fffeffffffULL);
	/* "Cap" is a prefix of keys, not a key */
	CHECK_EQ_INT(proc_status_field(root, "Cap", v, sizeof(v)), -1);
	/* 2 bytes hold 1 character: "cat" does not fit, and is not cut */
	CHECK_EQ_INT(proc_status_field(root, "Name", v, 2), -1);
	free((char *)root);

	caps = 1;
	CHECK_EQ_INT(proc_status_caps(check_fixture("proc/status-nobody"),
				      &caps), 0);
	CHECK(caps == 0);
	CHECK_EQ_INT(proc_status_caps(check_fixture("proc/no-such-file"),
				      &caps), -1);
}

static void test_status_refused(void)
{
	uint64_t caps = 7;
	char v[16];
	CHECK_EQ_INT(proc_status_caps(scratch("CapEff:\t\n"), &caps), -1);
	CHECK_EQ_INT(proc_status_caps(scratch("CapEff:\t0000x1ff\n"), &caps), -1);
	CHECK_EQ_INT(proc_status_caps(scratch("CapEff:\t10000000000000000\n"),
				      &caps), -1);
	CHECK_EQ_INT(proc_status_caps(scratch("CapPrm:\tff\n"), &caps), -1);
	CHECK(caps == 7);
	/* a long line whose tail reads like a line of its own is still one
	 * line, wherever a buffer of 2^k bytes (fgets keeps one for the NUL)
	 * would have cut it */
	static char text[8300];
	int split = 0;
	for (int b = 64; b <= 4096; b *= 2) {
		for (int n = b - 1; n <= 2 * b; n += b - 1) {
			memset(text, 'x', (size_t)n);
			snprintf(text + n, sizeof(text) - (size_t)n,
				 "CapEff:\tffff\nSeccomp:\t2\n");
			split += proc_status_caps(scratch(text), &caps) == 0;
		}
	}
	CHECK_EQ_INT(split, 0);
	CHECK_EQ_INT(proc_status_field(tmp, "Seccomp", v, sizeof(v)), 0);
	CHECK(strcmp(v, "2") == 0);
	CHECK_EQ_INT(proc_status_caps(scratch("CapEff:  00000000003fffff"),
				      &caps), 0);
	CHECK(caps == 0x3fffff);
}

static void test_schedstat(void)
{
	FILE *f = fopen(check_fixture("proc/schedstat"), "r");
	char line[96] = "";
	CHECK(f && fgets(line, sizeof(line), f));
	if (f)
		fclose(f);
	CHECK_EQ_INT(proc_schedstat_delay(line), 29313433);
	CHECK_EQ_INT(proc_schedstat_delay("0 0 0\n"), 0);
	CHECK_EQ_INT(proc_schedstat_delay("5 9223372036854775807 1"),
		     9223372036854775807LL);
	CHECK_EQ_INT(proc_schedstat_delay("5 9223372036854775808 1"), -1);
	CHECK_EQ_INT(proc_schedstat_delay("5 -3 1"), -1);
	CHECK_EQ_INT(proc_schedstat_delay("5"), -1);
	CHECK_EQ_INT(proc_schedstat_delay("5 12x 1"), -1);
	CHECK_EQ_INT(proc_schedstat_delay(" 5 12 1"), -1);
	CHECK_EQ_INT(proc_schedstat_delay(""), -1);
}

int main(void)
{
	const char *dir = getenv("TEST_TMP");
	snprintf(tmp, sizeof(tmp), "%s/test_proc.%d", dir ? dir : P_tmpdir,
		 (int)getpid());
	test_status_fixtures();
	test_status_refused();
	test_schedstat();
	unlink(tmp);
	return check_done();
}
