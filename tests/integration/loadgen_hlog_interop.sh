#!/usr/bin/env bash
# HdrHistogram interval logs cross implementations both ways: what
# loadgen --hlog writes, hdr-histogram-js (tests/interop/) decodes to the
# counts, max and percentiles loadgen's own JSON reports; what
# hdr-histogram-js writes, loadgen merge adds up to the exact count and max.
# hdr-histogram-js comes from the npm registry into the cache, keyed by
# tests/interop/package.json; without npm or the registry the test skips.
# timeout: 240
# shellcheck disable=SC2016 # the $names in the filters are jq's
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

if ! command -v npm >/dev/null; then
	"$top/mk/deps" interop >"$TEST_TMP/deps.log" 2>&1 ||
		skip "no npm, and mk/deps interop failed: $(tail -n 1 "$TEST_TMP/deps.log")"
fi
key=$(sha256sum "$top/tests/interop/package.json" | cut -c1-16)
mods=${RELAY_CACHE:-/var/cache/relay}/npm/$key
if [ ! -f "$mods/done" ]; then
	rm -rf "$mods"
	mkdir -p "$mods"
	cp "$top/tests/interop/package.json" "$mods/"
	( cd "$mods" && timeout 180 npm install --no-audit --no-fund ) >"$TEST_TMP/npm.log" 2>&1 ||
		skip "cannot install hdr-histogram-js with npm: $(tail -n 3 "$TEST_TMP/npm.log" | tr '\n' ' ')"
	touch "$mods/done"
fi
export NODE_PATH=$mods/node_modules
hdrjs() { node "$top/tests/interop/hdr.js" "$@"; }

# loadgen -> hdr-histogram-js
start_echo
"$LOADGEN" --target "udp://127.0.0.1:$ECHO_PORT" --rate 2000 --duration 1 \
	--no-progress --json "$TEST_TMP/run.json" --hlog "$TEST_TMP/run.hlog" \
	>"$TEST_TMP/run.out" || fail "loadgen run: $(cat "$TEST_TMP/run.out")"
hdrjs read "$TEST_TMP/run.hlog" >"$TEST_TMP/js.jsonl" || fail "hdr-histogram-js cannot read loadgen's log"
cat "$TEST_TMP/js.jsonl"
# the same tags, counts and settings, and max and percentiles the highest
# value of the same bucket (hdr-histogram-js tags the corrected ones "")
json_ok "$TEST_TMP/run.json" '[$js[].tag] | unique == ["", "uncorrected"]' \
	"hdr-histogram-js read the tags $(jq -sc 'map(.tag)' "$TEST_TMP/js.jsonl"), not \"\" and uncorrected" \
	--slurpfile js "$TEST_TMP/js.jsonl"
for name in corrected uncorrected; do
	tag=$name
	[ "$name" = corrected ] && tag=
	json_ok "$TEST_TMP/run.json" 'INDEX($js[]; .tag)[$tag] as $h | .latency_us[$name] as $o
		| $h.count == $o.count and $o.count > 0
		and [$h.digits, $h.lowest, $h.highest] == [3, 1, 10000000]
		and all("max", "p50", "p99"; $h[.] != null and $h[.] == $o[.])' \
		"hdr-histogram-js read other numbers than loadgen reported ($name: loadgen's $(jq -c ".latency_us.$name | {count, max, p50, p99}" "$TEST_TMP/run.json"))" \
		--slurpfile js "$TEST_TMP/js.jsonl" --arg tag "$tag" --arg name "$name"
done
echo "loadgen -> hdr-histogram-js: counts, max, p50, p99 agree"

# hdr-histogram-js -> loadgen merge
mkdir -p "$TEST_TMP/js"
seed=$(( $(date +%s) % 100000 ))
echo "random logs, seed $seed"
hdrjs random "$TEST_TMP/js" 4 "$seed" || fail "hdr-histogram-js could not write logs"
"$LOADGEN" merge --json "$TEST_TMP/merged.json" "$TEST_TMP"/js/random-*.hlog ||
	fail "loadgen merge refused hdr-histogram-js's logs"
json_ok "$TEST_TMP/merged.json" '
	.latency_us.corrected as $c | $want[0] as $w
	| .count == $c.count and $c.count == $w.count and $c.max == $w.max' \
	"merged other numbers than hdr-histogram-js wrote (seed $seed)" \
	--slurpfile want "$TEST_TMP/js/expect.json"
echo "hdr-histogram-js -> loadgen merge: $(jq -r '"count \(.count), max \(.latency_us.corrected.max)"' "$TEST_TMP/merged.json")"
pass "interval logs read both ways with hdr-histogram-js"
