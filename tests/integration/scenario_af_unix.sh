#!/usr/bin/env bash
# demo-scenario --af-unix 1: loadgen sends to relay over an abstract
# AF_UNIX name while the RT ticker stays on UDP; relay listens on both,
# every datagram is answered (relay's send buffer holds what the throttled
# senders have not read yet: nothing fails as tx_full), the ticker is
# echoed, and net.unix.max_dgram_qlen is raised for the run and put back;
# its running.json fits its record.
# timeout: 120
# variants: release
. "$(dirname "$0")/../lib.sh"
need_scenario

qlen=/proc/sys/net/unix/max_dgram_qlen
before=$(cat $qlen)
out=$TEST_TMP/run
"$scenario" --relay "$RELAY" --loadgen "$LOADGEN" --out "$out" \
	--port "$(free_udp_port)" --duration-s 3 --rate-pps 2000 --senders 2 \
	--cpu-quota-pct 10 --period-us 10000 --ticker-us 10000 --af-unix 1 \
	--run-dir "$TEST_TMP" >"$TEST_TMP/run.log" 2>&1 ||
	fail "the scenario with --af-unix 1 exited $?: $(tail -n 5 "$TEST_TMP/run.log")"
# running.json, what a driver beside it reads (lab/capacity/grid), fits its
# record and names what ran
"$top/mk/py" report.formats check "$out/running.json" >/dev/null || fail "running.json does not fit its record"
json_ok "$out/running.json" '(.loadgen_target | startswith("unix://@relay-demo-"))
	and (.relay_udp | startswith("udp://127.0.0.1:")) and .senders == 2
	and (.cgroup | startswith("/"))' "running.json names the co-tenant's cgroup, target and senders"
[ "$(cat $qlen)" = "$before" ] || fail "max_dgram_qlen is $(cat $qlen) after the run, was $before"
grep -q "loadgen sends to unix://@relay-demo-[0-9]*, $qlen" "$TEST_TMP/run.log" ||
	fail "the scenario does not say where loadgen sends: $(cat "$TEST_TMP/run.log")"
grep -q "relay: ready: listen udp://127.0.0.1:[0-9]* unix://@relay-demo-" "$out/relay.log" ||
	fail "relay does not listen on both: $(head -n 3 "$out/relay.log")"
json_ok "$out/scenario.json" '.params.af_unix == 1' "af_unix among the run's parameters"
json_ok "$out/loadgen.json" '.sent >= 5000 and .lost == 0' "loadgen over AF_UNIX, without loss"
json_ok "$out/relay.json" '.drops.tx_full == 0 and .drops.unnamed == 0' "relay's answers all sent"
json_ok "$out/scenario.json" '.ticker.echoes >= 250 and .ticker.echoes == .ticker.sent' \
	"every ticker datagram echoed"
pass "loadgen over AF_UNIX and the ticker over UDP, every datagram answered"
