#!/usr/bin/env bash
# The demo's scenario runner on this host with the real relay and loadgen:
# a stall is forced by stopping the relay (SIGSTOP), and the watchdog must
# notice it, lift the quota, see the stall end, restore the quota and record
# it all. Then the host mode of the demo driver end to end: results
# directory, summary, report, and every file of it fits its reader.
# timeout: 240
. "$(dirname "$0")/../../../tests/lib.sh"
need_scenario

out=$TEST_TMP/one
port=$(free_udp_port)
"$scenario" --relay "$RELAY" --loadgen "$LOADGEN" --out "$out" --port "$port" \
	--duration-s 4 --rate-pps 2000 --stall-ms 150 --lift-ms 2000 --run-dir "$TEST_TMP" &
scen=$!
bg_pids+=("$scen")
wait_for 10 test -s "$out/relay.log" || fail "relay did not start (scenario log: $(ls "$out"))"
relay_pid=
for _ in $(seq 50); do
	relay_pid=$(pgrep -P "$scen" -x relay || true)
	[ -n "$relay_pid" ] && break
	sleep 0.1
done
[ -n "$relay_pid" ] || fail "no relay child of the scenario runner"
# The watchdog is armed while loadgen sends: on a loaded host the relay
# can take seconds to be ready, and loadgen starts only then.
wait_for 20 test -e "$out/loadgen.log" || fail "loadgen did not start (scenario log: $(ls "$out"))"
sleep 1.5
kill -STOP "$relay_pid"
sleep 0.6
kill -CONT "$relay_pid"
wait "$scen"
rc=$?
cat "$out/events.csv"
[ $rc -eq 0 ] || { cat "$out/relay.log" "$out/loadgen.log"; fail "scenario exited $rc"; }

"$top/mk/py" lab.demo.tests.demo_scenario stopped "$out" || fail "the stall was not recorded as it happened"
[ -z "$(ls "$TEST_TMP"/relay-demo-*.heartbeat 2>/dev/null)" ] || fail "heartbeat file left behind"

# Bad flags: usage status, nothing started.
"$scenario" --relay "$RELAY" --loadgen "$LOADGEN" --out "$TEST_TMP/x" --watchdog-prio 10 2>/dev/null
[ $? -eq 64 ] || fail "a watchdog below the relay's priority was accepted"

# The host mode of the driver: same results layout, summary and report.
[ "$VARIANT" = release ] || { pass "scenario runner (the driver is checked in the release run)"; exit 0; }
"$top/lab/demo/run" --host --results "$TEST_TMP/results" --duration-s 3 \
	--port "$(free_udp_port)" >"$TEST_TMP/run.log" 2>&1 || { cat "$TEST_TMP/run.log"; fail "run --host failed"; }
cat "$TEST_TMP/run.log"
run=$(readlink -f "$TEST_TMP/results/latest")
[ -d "$run/host/results" ] || fail "no results/latest/host"
grep -q '^verdict: SINGLE RUN' "$TEST_TMP/run.log" || fail "no verdict line in the driver's output"
grep -q "report: $run/report.html" "$TEST_TMP/run.log" || fail "the driver did not print the page's path"
"$top/report/check" "$run" || fail "the host run's report is not whole"
# Every file of the run fits its reader (docs/formats.md).
find "$run" -name '*.json' -print0 | xargs -0 "$top/mk/py" report.formats check >"$TEST_TMP/formats.out" ||
	fail "a file of the run does not fit docs/formats.md (above)"
[ "$(wc -l <"$TEST_TMP/formats.out")" -ge 7 ] || fail "fewer files than a run writes: $(cat "$TEST_TMP/formats.out")"
json_ok "$run/summary.json" '
	.host.outcome == "ok" and .host.stalls == 0
	and .host.relay_latency_us.max > 0 and .host.loadgen_latency_us.p50 > 0
	and .params.duration_s == 3' "host summary lacks the interface names"
pass "scenario runner and the driver's host mode"
