#!/usr/bin/env bash
# docs/measurements.md is the record: every row's note exists and every
# note in docs/notes/ has a row, one current row per command, and the
# rows quoting a recorded run under tests/fixtures/ have that run's date,
# figures and seconds (lab/lab record --check). Then copies made wrong,
# which it must refuse, naming the line.
# check: fast
# variants: release
# timeout: 120
. "$(dirname "$0")/../lib.sh"
lab=$top/lab/lab
"$lab" record --check 2>"$TEST_TMP/err" || fail "$(cat "$TEST_TMP/err")"

# A copy beside its own notes: a recorded run's figure changed, a note
# without a row.
mkdir -p "$TEST_TMP/docs/notes"
cp "$top"/docs/notes/*.md "$TEST_TMP/docs/notes/"
copy=$TEST_TMP/docs/measurements.md
sed 's/stalled 75 times (worst 226 ms)/stalled 76 times (worst 226 ms)/' "$top/docs/measurements.md" >"$copy"
cmp -s "$copy" "$top/docs/measurements.md" && fail "the copy of the record was not changed"
echo "# a measurement with no row" >"$TEST_TMP/docs/notes/2000-01-01-orphan.md"
rc=0
"$lab" record --check "$copy" 2>"$TEST_TMP/err" || rc=$?
[ $rc = 1 ] || fail "a wrong record passed (exit $rc)"
grep -q "gives is not the run's" "$TEST_TMP/err" || fail "the changed figure is not named: $(cat "$TEST_TMP/err")"
grep -q "notes/2000-01-01-orphan.md is linked by no row" "$TEST_TMP/err" ||
	fail "the note without a row is not named: $(cat "$TEST_TMP/err")"

# What a recorded run gives, as its row has it; an unreadable one is 65.
"$lab" record --gives "$top/tests/fixtures/record/demo-debian13" >"$TEST_TMP/out" ||
	fail "record --gives failed"
grep -q '^| 2026-12-06 | | FIXED: stock kernel stalled 75 times .* | 565 s |$' "$TEST_TMP/out" ||
	fail "record --gives printed: $(cat "$TEST_TMP/out")"
mkdir "$TEST_TMP/bad" && echo '{"date": 1}' >"$TEST_TMP/bad/summary.json"
rc=0
"$lab" record --gives "$TEST_TMP/bad" 2>"$TEST_TMP/err" || rc=$?
[ $rc = 65 ] || fail "an unreadable run gave exit $rc"
grep -q 'headline: expected text' "$TEST_TMP/err" || fail "not named: $(cat "$TEST_TMP/err")"
pass "the record's rows, notes and recorded runs agree"
