#!/usr/bin/env bash
# demo-scenario's parameters, resolved without a run: --describe is the
# table --help shows, each clock's defaults are its column there, a spec's
# "clock" picks them and --clock beats it, a spec's "scenario" object beats
# the defaults and a flag after it beats the spec; a bad clock, key, type
# or value is refused (64) naming the file, the key and what was wrong.
# check: fast
# timeout: 60
. "$(dirname "$0")/../../../tests/lib.sh"
ds=$BUILD/bin/demo-scenario
[ -x "$ds" ] || fail "$ds not built"
cd "$TEST_TMP" || fail "no $TEST_TMP"

"$ds" --describe >describe.json || fail "--describe exited $?"
json_ok describe.json '.program == "demo-scenario" and .clocks == ["host", "virtual"]
	and (.params | length) > 20
	and all(.params[]; .type == "int" and (.min | type) == "number" and .max >= .min
		and (.default | keys) == ["host", "virtual"]
		and all(.default[]; . >= 0 or . == -1)
		and .flag == "--" + (.name | gsub("_"; "-")))' "--describe's rows"
json_ok describe.json '[.params[] | select(.unit == "us")] | length > 5
	and all(.[]; .name | endswith("_us"))' "the units come from the names"
# every row is a flag of --help's parameters, and there are no others
"$ds" --help >help.txt || fail "--help exited $?"
jq -r '.params[].flag' describe.json | sort >described.txt
sed -n '/^The scenario.s parameters/,/^$/s/^  \(--[a-z-]*\) .*/\1/p' help.txt | sort >helped.txt
[ -s helped.txt ] || fail "no parameters in --help"
cmp -s described.txt helped.txt ||
	fail "--help's parameters are not --describe's: $(diff described.txt helped.txt)"

# defaults CLOCK: the clock's column of --describe, as --resolve prints it
defaults() { jq -cS --arg c "$1" '[.params[] | {(.name): .default[$c]}] | add' describe.json; }
resolved() { "$ds" "$@" --resolve | jq -cS . || fail "$* --resolve exited $?"; }
host=$(defaults host) virt=$(defaults virtual)
[ "$host" != "$virt" ] || fail "the clocks have the same defaults"
[ "$(resolved)" = "$host" ] || fail "no clock: not the host's defaults"
[ "$(resolved --clock host)" = "$host" ] || fail "--clock host: not its defaults"
[ "$(resolved --clock virtual)" = "$virt" ] || fail "--clock virtual: not its defaults"
echo '{"clock": "virtual", "scenario": {}}' >virtual.json
echo '{"clock": "host", "scenario": {"duration_s": 60}}' >host.json
echo '{"scenario": {"cpu_quota_pct": 20}}' >noclock.json
[ "$(resolved --spec virtual.json)" = "$virt" ] || fail "a spec's clock does not pick its defaults"
[ "$(resolved --spec virtual.json --clock host)" = "$host" ] || fail "--clock does not beat the spec's clock"
[ "$(resolved --clock host --spec virtual.json)" = "$host" ] || fail "--clock before the spec does not beat it"
[ "$(resolved --spec virtual.json --spec noclock.json)" = "$(jq -cS '.cpu_quota_pct = 20' <<<"$virt")" ] ||
	fail "a spec without a clock changed the clock"
[ "$(resolved --spec virtual.json --spec host.json)" = "$(jq -cS '.duration_s = 60' <<<"$host")" ] ||
	fail "the last spec's clock does not win"
[ "$(resolved --clock virtual --spec noclock.json --cpu-quota-pct 30)" = \
	"$(jq -cS '.cpu_quota_pct = 30' <<<"$virt")" ] || fail "a flag after the spec does not win"
[ "$(resolved --clock virtual --cpu-quota-pct 30 --spec noclock.json)" = \
	"$(jq -cS '.cpu_quota_pct = 20' <<<"$virt")" ] || fail "a spec after a flag does not win"

# refused STATUS TEXT ARGS...: demo-scenario ARGS --resolve exits STATUS and says TEXT.
refused() {
	local want=$1 text=$2 rc=0
	shift 2
	"$ds" "$@" --resolve >out.txt 2>err.txt || rc=$?
	[ "$rc" = "$want" ] || fail "$* exited $rc, not $want: $(cat err.txt)"
	grep -qF -- "$text" err.txt || fail "$* did not say '$text': $(cat err.txt)"
	[ ! -s out.txt ] || fail "$* printed a scenario: $(cat out.txt)"
}
echo '{"clock": "wall", "scenario": {}}' >wall.json
echo '{"scenario": {"nope": 1, "rate_pps": "fast", "cpu_quota_pct": 0, "senders": 3}}' >bad.json
echo '{"clock": "host"}' >none.json
echo '{"scenario": {"cpu_quota_pct": 1, "period_us": 10000}}' >small.json
refused 64 "--clock 'wall': expected host or virtual" --clock wall
refused 64 'wall.json: clock: expected "host" or "virtual"' --spec wall.json
refused 64 "bad.json: scenario.nope: no such parameter" --spec bad.json
refused 64 "bad.json: scenario.rate_pps: expected an integer" --spec bad.json
refused 64 "bad.json: scenario.cpu_quota_pct: 0 out of range 1..100" --spec bad.json
refused 64 'none.json: no "scenario" object' --spec none.json
refused 64 "missing.json:" --spec missing.json
refused 64 "is 100 us, below the 1000 us cpu.max allows" --spec small.json
refused 64 "--period-us: 'x' is not an integer" --period-us x
refused 64 "--late-ms: 0 out of range 1..600000" --late-ms 0
refused 64 "unknown option '--bogus'" --bogus 1
refused 64 "unexpected argument 'extra'" extra
pass "demo-scenario's table: --describe, both clocks' defaults, spec and flags in order, refusals"
