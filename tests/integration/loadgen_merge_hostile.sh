#!/usr/bin/env bash
# loadgen merge on the crafted logs of tests/fixtures/hlog/hostile.tsv:
# each is refused with exit 65 and its message, writes no result, and
# allocates nothing a line only declares. A payload of 10^8 bytes, which
# 130 KB of zlib can hold but the 15360 slots' counts cannot (9 bytes
# each), was allocated and inflated before it was refused (985 MB for a
# payload of 10^9); a zero run of INT64_MIN was negated (UBSan stopped
# there; the release build said "a run of -9223372036854775808"). The
# peak memory of each refusal is held to that of merging two small logs,
# measured here, plus what the largest histogram read takes.
# check: fast
# timeout: 120
. "$(dirname "$0")/../lib.sh"
hl=$FIXTURES/hlog
out=$TEST_TMP/merged.json
[ -x /usr/bin/time ] || fail "/usr/bin/time is needed (mk/packages/test.txt: time)"

# merge FILE...: merge them; the peak resident memory in $kb (KB), the exit
# status in $status, the message in $TEST_TMP/err
merge() {
	status=0
	timeout 60 /usr/bin/time -f %M -o "$TEST_TMP/peak" "$LOADGEN" merge \
		--json "$out" "$@" >/dev/null 2>"$TEST_TMP/err" || status=$?
	kb=$(tail -n 1 "$TEST_TMP/peak")
}
merge "$hl/host-a.hlog" "$hl/host-b.hlog"
base=$kb
[ "$status" = 0 ] || fail "merge of host-a and host-b exited $status: $(cat "$TEST_TMP/err")"
# The largest histogram read is 8 MB of counts; merge holds four of them.
bound=$((base + 4 * 8 * 1024 + 8 * 1024))
echo "merging two small logs peaked at $base KB; each refusal may take $bound KB"

n=0
while IFS=$'\t' read -r files text; do
	case $files in '#'* | '') continue ;; esac
	args=()
	for f in $files; do args+=("$hl/$f"); done
	rm -f "$out"
	merge "${args[@]}"
	[ "$status" = 65 ] || fail "merge $files exited $status, not 65: $(cat "$TEST_TMP/err")"
	grep -qF -- "$hl/$text" "$TEST_TMP/err" ||
		fail "merge $files did not say '$text': $(cat "$TEST_TMP/err")"
	[ ! -e "$out" ] || fail "merge $files wrote $out though it refused"
	[ "$kb" -le "$bound" ] || fail "merge $files peaked at $kb KB, over $bound KB: it allocated what a line declared"
	echo "ok: $files: $kb KB: $(cat "$TEST_TMP/err")"
	n=$((n + 1))
done <"$hl/hostile.tsv"
[ "$n" -ge 8 ] || fail "only $n cases read from hostile.tsv"
pass "$n crafted logs refused, each within $bound KB"
