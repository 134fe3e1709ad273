# shellcheck shell=bash
# Shell helpers for the integration and VM tests. Source it:
#   . "$(dirname "$0")/../lib.sh"
# The runner exports RELAY, LOADGEN, BUILD, VARIANT, TEST_TMP and FIXTURES.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${BUILD:=$top/build/release}"
: "${RELAY:=$BUILD/bin/relay}"
: "${LOADGEN:=$BUILD/bin/loadgen}"
: "${TEST_TMP:=$(mktemp -d)}"
: "${FIXTURES:=$top/tests/fixtures}"

# fail WORDS: the test failed; the end of $FAIL_LOG (a daemon's log a
# fixture names) goes with it, since the test's directory is removed.
fail() {
	echo "FAIL: $*" >&2
	if [ -n "${FAIL_LOG:-}" ] && [ -s "$FAIL_LOG" ]; then
		echo "--- the end of ${FAIL_LOG##*/}:" >&2
		tail -n 20 "$FAIL_LOG" >&2
	fi
	exit 1
}
# json_ok FILE FILTER WHAT: fail with WHAT unless the jq FILTER holds for
# FILE (ARGS after WHAT go to jq, e.g. --arg NAME VALUE).
json_ok() {
	local file=$1 filter=$2 what=$3; shift 3
	jq -e "$@" "$filter" "$file" >/dev/null || fail "$what (not true in $file: $filter)"
}
# json_edit FILE FILTER: FILE rewritten by the jq FILTER.
json_edit() {
	{ jq "$2" "$1" >"$1.new" && mv "$1.new" "$1"; } || fail "json_edit $1: $2"
}
# pylib MODULE ARGS...: the helper tests/pylib/MODULE.py (mk/py tests.pylib.MODULE).
pylib() { local m=$1; shift; "$top/mk/py" "tests.pylib.$m" "$@"; }
# pylib_bg MODULE ARGS...: the same in the background, killed when the test
# exits; $! is its process id (python3's own, so that a kill reaches it).
pylib_bg() { local m=$1; shift; bg "$top/mk/py" "tests.pylib.$m" "$@"; }
skip() { echo "skipped: $*"; exit 77; }
pass() { echo "ok: $*"; }

# Processes started with bg are killed when the test exits.
bg_pids=()
bg() { "$@" & bg_pids+=($!); }
cleanup_bg() {
	local p
	for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null; done
}
trap cleanup_bg EXIT

# free_udp_port / free_tcp_port: a port nothing on loopback listens on now,
# and none this test was given before (the kernel may pick one twice, and
# two listeners of a test on one port would share its connections).
free_port() { pylib ports free "$1" "$TEST_TMP/.ports"; }
free_udp_port() { free_port udp; }
free_tcp_port() { free_port tcp; }

# wait_for SECONDS COMMAND...: poll COMMAND every 0.1 s until it succeeds.
wait_for() {
	local limit=$1; shift
	local tries=$((limit * 10))
	while [ $tries -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		tries=$((tries - 1))
	done
	return 1
}

# tcp_up PORT: something accepts TCP connections on 127.0.0.1:PORT (the
# connection closed at once; a connect that hangs fails after 1 s).
tcp_up() { timeout 1 bash -c ": 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root ($1)"; }

# need_scenario: what running demo-scenario on this host needs (root for
# the cgroup quota and SCHED_FIFO, two CPUs for the relay and the
# watchdog, the cpu controller); skips naming what is missing, and sets
# $scenario to the built binary.
need_scenario() {
	need_root "cgroup quota and SCHED_FIFO"
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (relay and watchdog on different ones)"
	grep -qw cpu /proc/cgroups 2>/dev/null || skip "no cpu cgroup controller"
	scenario=$BUILD/bin/demo-scenario
	[ -x "$scenario" ] || fail "$scenario not built"
}

# asan builds are slower; scale time-based expectations with this factor.
slow_factor() { [ "${VARIANT:-release}" = asan ] && echo 3 || echo 1; }

# need_vm_page: what a test needs to boot the kernels under QEMU and look
# at the page it makes in headless Chromium (root: cgroups and the device
# nodes of the initramfs); skips naming what is missing.
need_vm_page() {
	need_root "cgroups, device nodes in the initramfs"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86 not installed (mk/deps demo)"
	command -v chromium >/dev/null || skip "chromium not installed (mk/deps report)"
}

# fuzz_test NAME: the test of the libFuzzer target tests/fuzz/fuzz_NAME.c.
# The release pass fuzzes it FUZZ_SMOKE_SECONDS (4 s) from its seed corpus,
# a smoke test (the long hunts are make fuzz's: nine targets at a full core
# each were a minute of make test's side lane at 8 s); the ASan pass only
# replays the corpus (the crashes found before are in it), since the
# target always runs under ASan+UBSan.
FUZZ_SMOKE_SECONDS=4
fuzz_test() {
	command -v clang >/dev/null || skip "clang not installed (mk/packages/test.txt)"
	if [ "${VARIANT:-release}" = asan ]; then
		"$top/tests/fuzz/run" --replay --dir "$TEST_TMP" "$1" ||
			fail "a seed of tests/fuzz/corpus/$1 crashes fuzz_$1"
		pass "the $1 corpus replayed"
	else
		"$top/tests/fuzz/run" --seconds $FUZZ_SMOKE_SECONDS \
			--dir "$TEST_TMP" "$1" ||
			fail "fuzz_$1 failed: a crash (its input named above) or a run that did not start"
		pass "$FUZZ_SMOKE_SECONDS s of fuzzing $1, no crash"
	fi
}

# kernel_deb LOCK VERSION OUT [MODEL]: a linux-image package of Debian's
# layout at VERSION, for PREEMPT_RT, whose vmlinuz holds BTF (kernel_btf)
# with a struct eventpoll whose lock is LOCK and the scheduler structs of
# the CFS throttle MODEL (task, cfs_rq or none; default cfs_rq),
# xz-compressed behind a stand-in setup header, as a Debian vmlinuz
# carries its kernel: relay-preflight and kernel/debian-image read it.
kernel_deb() {
	local d=$TEST_TMP/kernel-deb rel=6.1.0-57-rt-amd64 tool
	for tool in xz dpkg-deb; do
		command -v "$tool" >/dev/null || fail "$tool is needed (mk/deps test deploy)"
	done
	rm -rf "$d"
	mkdir -p "$d/DEBIAN" "$d/boot"
	printf 'Package: linux-image-%s\nVersion: %s\nArchitecture: %s\nMaintainer: test <test@localhost>\nDescription: test kernel\n' \
		"$rel" "$2" "$(dpkg --print-architecture)" >"$d/DEBIAN/control"
	kernel_btf "$1" "${4:-cfs_rq}" "$d/ep.o"
	{ head -c 20000 /dev/zero; xz -c "$d/ep.o"; } >"$d/boot/vmlinuz-$rel"
	rm "$d/ep.o"
	printf 'CONFIG_PREEMPT_RT=y\n' >"$d/boot/config-$rel"
	dpkg-deb -Zxz --root-owner-group --build "$d" "$3" >/dev/null || fail "dpkg-deb --build"
}

# kernel_btf LOCK MODEL OUT: an ELF object (clang's BTF) with the types a
# kernel's BTF has for what relay-preflight reads: struct eventpoll with a
# lock of type LOCK, the epitem and eppoll_entry the trace probe walks,
# and task_struct and cfs_rq as the CFS throttle MODEL has them (task: the
# task-based model of v6.18, with task_struct's sched_throttle_work and
# throttle_node and cfs_rq's throttled_limbo_list; cfs_rq: the model
# before it, with cfs_rq's throttled_list; none: no CFS bandwidth fields).
kernel_btf() {
	local sched
	command -v clang >/dev/null || fail "clang is needed (mk/deps test)"
	case $2 in
	task) sched='struct task_struct { int pid; struct callback_head sched_throttle_work; struct list_head throttle_node; };
		struct cfs_rq { int throttled; int throttle_count; struct list_head throttled_list; struct list_head throttled_limbo_list; };' ;;
	cfs_rq) sched='struct task_struct { int pid; };
		struct cfs_rq { int throttled; int throttle_count; struct list_head throttled_list; };' ;;
	none) sched='struct task_struct { int pid; }; struct cfs_rq { unsigned int nr_running; };' ;;
	*) fail "kernel_btf: throttle model '$2'" ;;
	esac
	cat >"$3.c" <<-EOF
	typedef struct { int raw; } $1;
	struct list_head { struct list_head *next, *prev; };
	struct callback_head { struct callback_head *next; void (*func)(struct callback_head *); };
	struct eventpoll { int mtx; struct list_head wq; struct list_head rdllist; $1 lock; void *ovflist; };
	struct epitem { struct list_head rbn; struct list_head rdllink; void *next; struct eventpoll *ep; };
	struct eppoll_entry { void *next; struct epitem *base; struct list_head wait; void *whead; };
	$sched
	struct eventpoll ep; struct epitem epi; struct eppoll_entry pwq;
	struct task_struct task; struct cfs_rq cfs_rq;
	EOF
	clang -target bpf -g -c "$3.c" -o "$3" || fail "clang -target bpf"
	rm -f "$3.c"
}
