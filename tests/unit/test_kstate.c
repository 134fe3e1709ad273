/*
 * kstate on BTF built from tests/fixtures/btf/kernel.c, one kernel of each
 * lock, throttle model and preemption model, by the kernel-markers relay
 * was built with; that built-in text is deploy/kernel-markers, byte for
 * byte; malformed rows are refused naming their line; a BTF that cannot
 * be read is unknown throughout, never fixed; and the running kernel's own
 * BTF, where it has one, tells its lock.
 */
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kstate.h"

static char err[512];

/* The facts of fixture btf/NAME.o, one "name value" each, space-joined. */
static const char *facts(const char *name, const char *realtime)
{
	static char out[512];
	char file[128];
	struct kstate k;
	snprintf(file, sizeof(file), "btf/%s.o", name);
	CHECK_EQ_INT(kstate_read(&k, kstate_markers, check_fixture(file),
				 realtime, err, sizeof(err)), 0);
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < k.n; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s %s",
				      i ? ", " : "", k.item[i].name,
				      k.item[i].value);
	return out;
}

static void expect(const char *name, const char *want)
{
	const char *got = facts(name, NULL);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "%s: got '%s', expected '%s'\n", name, got, want);
	CHECK(strcmp(got, want) == 0);
}

static void test_fixtures(void)
{
	expect("rt-rwlock-cfs_rq", "eventpoll_lock rwlock_t, throttle_model cfs_rq, "
	       "preempt_rt yes, epoll_fix missing");
	expect("rt-rwlock-task", "eventpoll_lock rwlock_t, throttle_model task, "
	       "preempt_rt yes, epoll_fix missing");
	expect("rt-spinlock-cfs_rq", "eventpoll_lock spinlock_t, throttle_model "
	       "cfs_rq, preempt_rt yes, epoll_fix fixed");
	expect("rt-spinlock-task", "eventpoll_lock spinlock_t, throttle_model task, "
	       "preempt_rt yes, epoll_fix fixed");
	expect("nonrt-rwlock-none", "eventpoll_lock rwlock_t, throttle_model none, "
	       "preempt_rt no, epoll_fix missing");
	expect("rt-no-eventpoll", "eventpoll_lock unknown, throttle_model cfs_rq, "
	       "preempt_rt yes, epoll_fix unknown");
}

/* The file relay-preflight reads is the one relay was built with. */
static void test_built_in(void)
{
	FILE *f = fopen(check_fixture("../../deploy/kernel-markers"), "r");
	static char text[1 << 16];
	CHECK(f != NULL);
	if (!f)
		return;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	CHECK(strcmp(text, kstate_markers) == 0);
}

static void test_unreadable(void)
{
	struct kstate k;
	const char *bad[] = { "/nonexistent/vmlinux", check_fixture("btf/kernel.c") };
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(kstate_read(&k, kstate_markers, bad[i], NULL, err,
					 sizeof(err)), 0);
		CHECK(strcmp(kstate_get(&k, "epoll_fix"), "unknown") == 0);
		CHECK(strcmp(kstate_get(&k, "eventpoll_lock"), "unknown") == 0);
		CHECK(strcmp(kstate_get(&k, "preempt_rt"), "unknown") == 0);
		CHECK(strstr(k.why, "cannot read the BTF of") != NULL);
	}
	/* PREEMPT_RT from /sys/kernel/realtime where the BTF says nothing. */
	char rt[] = "/tmp/test_kstate_rtXXXXXX";
	int fd = mkstemp(rt);
	CHECK(fd >= 0 && write(fd, "1\n", 2) == 2);
	close(fd);
	CHECK_EQ_INT(kstate_read(&k, kstate_markers, bad[0], rt, err,
				 sizeof(err)), 0);
	CHECK(strcmp(kstate_get(&k, "preempt_rt"), "yes") == 0);
	CHECK(strcmp(kstate_get(&k, "epoll_fix"), "unknown") == 0);
	/* ... but the BTF's word comes first. */
	CHECK(strstr(facts("nonrt-rwlock-none", rt), "preempt_rt no") != NULL);
	unlink(rt);
}

static void refused(const char *markers, const char *want)
{
	struct kstate k;
	err[0] = 0;
	CHECK_EQ_INT(kstate_read(&k, markers, "/nonexistent", NULL, err,
				 sizeof(err)), -1);
	if (!strstr(err, want))
		fprintf(stderr, "got '%s', expected '%s'\n", err, want);
	CHECK(strstr(err, want) != NULL);
}

static void test_malformed(void)
{
	refused("fact a b c d\nfacts x y z w\n",
		"kernel-markers:2: 'facts' is not a row");
	refused("# c\n\nverdict a b c\n", "kernel-markers:3: a verdict row has 4");
	refused("fact a b c d e\n", "kernel-markers:1: a fact row has 4");
	/* Comments and markers rows are no facts. */
	struct kstate k;
	CHECK_EQ_INT(kstate_read(&k, "markers x y # z\nfact a s m v # c\n",
				 "/nonexistent", NULL, err, sizeof(err)), 0);
	CHECK_EQ_INT(k.n, 1);
	CHECK(strcmp(kstate_get(&k, "a"), "unknown") == 0);
}

/* The running kernel's BTF, where it has one: some lock type. */
static void test_running(void)
{
	struct kstate k;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("note: no /sys/kernel/btf/vmlinux here; the fixtures only\n");
		return;
	}
	CHECK_EQ_INT(kstate_read(&k, kstate_markers, "/sys/kernel/btf/vmlinux",
				 NULL, err, sizeof(err)), 0);
	const char *lock = kstate_get(&k, "eventpoll_lock");
	CHECK(strcmp(lock, "rwlock_t") == 0 || strcmp(lock, "spinlock_t") == 0);
	CHECK(strcmp(kstate_get(&k, "preempt_rt"), "unknown") != 0);
	CHECK(strcmp(kstate_get(&k, "throttle_model"), "unknown") != 0);
}

int main(void)
{
	test_fixtures();
	test_built_in();
	test_unreadable();
	test_malformed();
	test_running();
	return check_done();
}
