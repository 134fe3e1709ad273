#!/usr/bin/env bash
# Ctrl-C on tests/run (SIGINT to its process group; a copy of the runner
# on a tree of stub tests): while a main-lane and a side-lane test run, it
# stops both (each runs in a process group of its own, which Ctrl-C does
# not reach) and their children within seconds, not at their time limit,
# exits 130 and leaves no temporary file; and right after it starts, at
# several moments, it leaves no temporary file and reports no shell error
# (an EXIT trap once named a variable not yet set), also from the many
# moments a signal lands while the runner expands a $(...).
# timeout: 300
# lane: side
# variants: release
# check: fast
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
command -v setsid >/dev/null || skip "no setsid (util-linux)"

tree=$TEST_TMP/tree
mkdir -p "$tree/tests/integration"
cp "$top/tests/run" "$top/tests/step" "$top/tests/runner.sh" "$tree/tests/"
# Each stub leaves a child that would outlive it, says it started, and
# waits far longer than the test waits for the runner to stop.
for lane in main side; do
	{
		printf '#!/bin/sh\n# variants: release\n# timeout: 100\n'
		[ $lane = main ] || echo "# lane: side"
		cat <<'EOF'
n=$(basename "$0" .sh)
sleep 90 &
echo $! >"$STUB_DIR/$n.child"
touch "$STUB_DIR/$n.started"
wait
EOF
	} >"$tree/tests/integration/$lane.sh"
	chmod +x "$tree/tests/integration/$lane.sh"
done
export STUB_DIR=$TEST_TMP/stub
mkdir -p "$STUB_DIR" "$TEST_TMP/tmp"

# start: tests/run in a session of its own (its pid is its process group),
# its temporary files in $TEST_TMP/tmp. A command started with & ignores
# SIGINT, which a shell cannot trap then: env gives it back, as a terminal
# has it.
start() {
	rm -f "$STUB_DIR"/*
	TMPDIR=$TEST_TMP/tmp setsid env --default-signal=INT "$tree/tests/run" >"$TEST_TMP/out" 2>"$TEST_TMP/err" &
	runner=$!
	# Until setsid and env have made way for bash, the group is not there,
	# or ignores SIGINT.
	local _
	for _ in $(seq 3000); do
		[[ "$(ps -o pgid=,comm= -p "$runner")" =~ ^\ *$runner\ +bash$ ]] && return
		sleep 0.01
	done
	fail "tests/run did not start in 30 s"
}
# ctrl_c_and_wait SECONDS: SIGINT to the runner's group; its status in $rc
# once it is gone, failing when that takes longer than SECONDS.
ctrl_c_and_wait() {
	local t0=$SECONDS
	kill -INT -- "-$runner" 2>/dev/null
	while kill -0 "$runner" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$1" ]; then
			ps -o pid,ppid,pgid,stat,args --forest -g "$runner" >&2
			cat "$TEST_TMP/out" "$TEST_TMP/err" >&2
			kill -KILL -- "-$runner"
			fail "tests/run still runs $1 s after Ctrl-C"
		fi
		sleep 0.1
	done
	rc=0
	wait "$runner" || rc=$?
}
# running PID: PID is a process, not a zombie (a child whose parent is gone
# waits for init to reap it).
running() { ps -o stat= -p "$1" | grep -qv '^Z'; }
# clean WHEN: no temporary file left, no shell error on stderr, no child
# of a stub test that started still running.
clean() {
	local f
	for f in "$STUB_DIR"/*.child; do
		[ -s "$f" ] || continue
		! running "$(cat "$f")" || fail "$1: the child of the stub ${f##*/} still runs"
	done
	if [ -n "$(ls -A "$TEST_TMP/tmp")" ]; then
		find "$TEST_TMP/tmp" >&2
		fail "$1: temporary files left"
	fi
	# the runner's session is empty once it has exited (but for zombies a
	# reaper has yet to collect): no lane of it writes on into a $tmp
	# already gone
	local left
	left=$(ps -o pid=,stat=,args= -s "$runner" | awk '$2 !~ /^Z/')
	if [ -n "$left" ]; then
		echo "$left" >&2
		pkill -KILL -s "$runner"
		fail "$1: the runner exited, its processes did not"
	fi
	if grep -E 'unbound variable|line [0-9]+:|No such file' "$TEST_TMP/err" >&2; then
		fail "$1: a shell error on stderr"
	fi
}

started() { [ -e "$STUB_DIR/main.started" ] && [ -e "$STUB_DIR/side.started" ]; }
start
for _ in $(seq 300); do
	started && break
	kill -0 "$runner" 2>/dev/null || { cat "$TEST_TMP/out" "$TEST_TMP/err" >&2; fail "tests/run ended before its tests started"; }
	sleep 0.1
done
started || { kill -KILL -- "-$runner"; fail "the stub tests did not start in 30 s"; }
# The shell that catches the signals runs the whole run as one child and
# only waits for it: it expands no $(...) a signal could land in (below).
kids=$(ps -o pid= --ppid "$runner" | wc -l)
[ "$kids" = 1 ] || { ps -o pid,ppid,args --forest -g "$runner" >&2; kill -KILL -- "-$runner"
	fail "the runner's first shell has $kids children while the tests run, expected 1"; }
ctrl_c_and_wait 30
[ "$rc" = 130 ] || { cat "$TEST_TMP/err" >&2; fail "interrupted during the tests: exit $rc, expected 130"; }
grep -q 'interrupted' "$TEST_TMP/err" || fail "interrupted during the tests: no word of it on stderr"
clean "interrupted during the tests"
pass "interrupted during the tests: both stopped, exit $rc, nothing left"

# From the start on, at moments 40 ms apart until the stubs run: whatever
# the runner was doing, it ends on its own and leaves nothing. Most of
# those moments find it expanding a $(...), where bash 5.2 parses a trap's
# command with the substitution's parser state and fails ("interrupt
# trap: line 2: unexpected EOF while looking for matching `)'"), then
# carries on without stopping the tests.
for i in $(seq 0 24); do
	start
	sleep "$(awk -v i="$i" 'BEGIN { printf "%.2f", i * 0.04 }')"
	ctrl_c_and_wait 10
	clean "interrupted $((i * 40)) ms after the start (exit $rc)"
done
pass "interrupted at 0 to 960 ms after the start: no temporary file, no shell error"
