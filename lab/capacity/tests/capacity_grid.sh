#!/usr/bin/env bash
# lab/capacity/grid's quota search on the host, against stand-ins with a
# known threshold: the co-tenant (a demo-scenario stand-in) records the
# quota it was started at and the RT step (a loadgen stand-in) meets its
# objectives from that quota up. The search must probe the highest quota,
# then the lowest, then bisect, and end with the quota that met within
# the resolution of the one that missed, the threshold between them; at
# the ends of the range it stops after one or two probes; a co-tenant
# that does not start stops the search and fails the grid. Every
# co-tenant runs the spec's scenario (demo-scenario --spec, the cell's
# rate, quota and busy-wait on top) and is found through its
# running.json, never its log; every search starts at the plan's lowest
# rate, one a cell. The real labspec reads the spec, running.json and
# the steps' JSON. (The guests run the same script: capacity/capacity_quick,
# make capacity.)
# timeout: 120
# lane: side
# variants: release
# check: fast
. "$(dirname "$0")/../../../tests/lib.sh"
labspec=$BUILD/bin/labspec
[ -x "$labspec" ] || fail "$labspec is not built"

bin=$TEST_TMP/bin
mkdir -p "$bin"
ln -s "$labspec" "$bin/labspec"
# demo-scenario: --cpu-quota-pct Q --out DIR; a cgroup of its own whose
# cgroup.procs holds its pid, announced in running.json as the real one
# does (its log says nothing the grid may read); SIGINT ends it (the grid
# starts it in the background, where a shell script finds SIGINT
# ignored: it takes it back, as the real one's handler does). Its
# command lines go to FAKE/scenario.argv. FAKE_NOSTART makes it end at
# once, writing nothing.
cat >"$bin/demo-scenario" <<'EOF'
#!/bin/sh
[ -n "${FAKE_INT:-}" ] || FAKE_INT=1 exec env --default-signal=INT "$0" "$@"
echo "$*" >>"$FAKE/scenario.argv"
while [ $# -gt 0 ]; do
	case $1 in
	--cpu-quota-pct) q=$2; shift ;;
	--out) out=$2; shift ;;
	esac
	shift
done
[ -z "${FAKE_NOSTART:-}" ] || exit 1
mkdir -p "$out/cg"
echo $$ >"$out/cg/cgroup.procs"
echo "$q" >"$FAKE/quota"
trap 'exit 130' INT
echo "demo-scenario: loadgen sending"
printf '{"cgroup": "%s", "relay_udp": "udp://127.0.0.1:7799", "loadgen_target": "unix://@x",
 "relay_pid": 1, "loadgen_pid": 2, "senders": 2}\n' "$out/cg" >"$out/running.json.tmp"
mv "$out/running.json.tmp" "$out/running.json"
i=0
while [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
EOF
# loadgen sweep: one step at --from; met from FAKE_THRESHOLD % of quota up
# (sweep --search: none found); the JSON as loadgen writes it. Its
# command lines go to FAKE/loadgen.argv.
cat >"$bin/loadgen" <<'EOF'
#!/bin/sh
echo "$*" >>"$FAKE/loadgen.argv"
while [ $# -gt 0 ]; do
	case $1 in
	--from) rate=$2; shift ;;
	--json) json=$2; shift ;;
	--search) search=1 ;;
	esac
	shift
done
q=$(cat "$FAKE/quota")
if [ -z "${search:-}" ] && [ "$q" -ge "$FAKE_THRESHOLD" ]; then met=true cap="{\"target_rate\": $rate}"
else met=false cap=null; fi
echo "$q" >>"$FAKE/probed"
printf '{"steps": [{"target_rate": %s, "meets_slo": %s}], "capacity": %s}\n' "$rate" "$met" "$cap" >"$json"
echo "step at quota $q: met $met"
EOF
chmod +x "$bin/demo-scenario" "$bin/loadgen"

# grid_run THRESHOLD [VAR=VALUE...]: the grid on one cell (quota 10) and
# the quota search from 10 to 95 % to 5 points; its status in $rc, the
# quotas its steps ran at (the cell's first) in $probed.
grid_run() {
	export FAKE=$TEST_TMP/fake.$1 FAKE_THRESHOLD=$1
	rm -rf "$FAKE" "$TEST_TMP/out"
	mkdir -p "$FAKE"
	cat >"$TEST_TMP/spec.json" <<EOF
{"clock": "virtual", "scenario": {"period_us": 10000, "senders": 2, "ticker_us": 0, "af_unix": 1},
 "capacity": {"cpu_quota_pct": [10], "cotenant_rate_pps": [30000], "rt_rate_from_pps": 117,
 "rt_rate_to_pps": 468, "resolution_pct": 5, "step_s": 1,
 "cotenant_demand_pct": 0, "rt_priority": 40, "pause_ms": 0, "step_samples": 0,
 "planned_rate_pps": 5000, "quota_search": "on", "threshold_demand_pct": 60, "threshold_quota_pct": [10, 95],
 "threshold_resolution_pct": 5, "slo": ["p99.9=2ms"], "trace": "off"}}
EOF
	rc=0
	shift
	env "$@" BIN="$bin" "$top/lab/capacity/grid" "$TEST_TMP/spec.json" "$TEST_TMP/out" \
		>"$TEST_TMP/grid.log" 2>&1 || rc=$?
	probed=()
	[ ! -s "$FAKE/probed" ] || mapfile -t probed < <(tail -n +2 "$FAKE/probed")
}

for t in 12 33 50 63 88; do
	grid_run $t
	[ "$rc" = 0 ] || { cat "$TEST_TMP/grid.log"; fail "threshold $t: the grid exited $rc"; }
	line=$(grep '^grid: threshold: 5000 pps met at' "$TEST_TMP/grid.log") ||
		{ cat "$TEST_TMP/grid.log"; fail "threshold $t: no answer"; }
	[[ $line =~ met\ at\ ([0-9]+)%,\ missed\ at\ ([0-9]+)% ]] || fail "threshold $t: '$line'"
	met=${BASH_REMATCH[1]} missed=${BASH_REMATCH[2]}
	if [ "$missed" -ge "$t" ] || [ "$met" -lt "$t" ] || [ $((met - missed)) -gt 5 ]; then
		fail "threshold $t: met at $met %, missed at $missed %: not around it within 5 points"
	fi
	if [ "${probed[0]}" != 95 ] || [ "${probed[1]}" != 10 ]; then
		fail "threshold $t: probed ${probed[*]}, not 95 then 10 first"
	fi
	[ ${#probed[@]} -le 7 ] || fail "threshold $t: ${#probed[@]} probes, more than 2 + the halvings of 85 to 5"
	dirs=("$TEST_TMP"/out/threshold/q*/)
	[ ${#dirs[@]} = ${#probed[@]} ] || fail "threshold $t: not a directory per probe"
	"$labspec" "$TEST_TMP/out/threshold/q$met/probe.json" cpu_quota_pct >/dev/null ||
		fail "threshold $t: no probe.json"
	echo "ok: threshold $t %: probed ${probed[*]} -> met at $met %, missed at $missed %"
done
pass "the quota search brackets the threshold within 5 points, highest and lowest quota first"

# Every co-tenant ran the spec's scenario with the cell's own values on
# top, and every RT step went to the relay's UDP listener it announced;
# the cell's search was one, from the lowest rate, warm from nothing.
while read -r line; do
	case " $line " in
	*" --spec $TEST_TMP/spec.json "*) ;;
	*) fail "a co-tenant without the spec's scenario: $line" ;;
	esac
	case " $line " in
	*" --period-us "* | *" --senders "* | *" --ticker-us "*) fail "the grid set the scenario's own: $line" ;;
	esac
done <"$FAKE/scenario.argv"
grep -q -- '--cpu-quota-pct 10 .*--out' "$FAKE/scenario.argv" || fail "the cell's quota was not given"
while read -r line; do
	case " $line " in
	*" --target udp://127.0.0.1:7799 "*) ;;
	*) fail "an RT step not to the relay running.json names: $line" ;;
	esac
done <"$FAKE/loadgen.argv"
search=$(grep -- ' --search ' "$FAKE/loadgen.argv") || fail "no search of the cell"
case " $search " in
*" --searches 1 "*" --from 117 "* | *" --from 117 "*" --searches 1 "*) ;;
*) fail "the cell's search was not one from the lowest rate: $search" ;;
esac
case " $search " in *" --start "*) fail "a search started warm: $search" ;; esac
pass "each co-tenant runs the spec's scenario, found through its running.json; one cold search a cell"

grid_run 3
grep -q 'met at 10%, the lowest quota tried' "$TEST_TMP/grid.log" ||
	fail "met at the lowest quota: not said"
[ "${probed[*]}" = "95 10" ] || fail "met at the lowest quota: probed ${probed[*]}"
grid_run 99
grep -q 'missed at 95%, the highest quota tried' "$TEST_TMP/grid.log" ||
	fail "missed at the highest quota: not said"
[ "${probed[*]}" = 95 ] || fail "missed at the highest quota: probed ${probed[*]}"
pass "met at the lowest quota, or missed at the highest: one or two probes, said so"

grid_run 50 FAKE_NOSTART=1
[ "$rc" = 1 ] || fail "a co-tenant that did not start: the grid exited $rc, expected 1"
grep -q 'did not start' "$TEST_TMP/out/threshold/q95/failed" || fail "the probe's failure is not in its directory"
[ ! -e "$TEST_TMP/out/threshold/q10" ] || fail "the search went on after a probe that could not run"
pass "a probe that could not run stops the search and fails the grid"
