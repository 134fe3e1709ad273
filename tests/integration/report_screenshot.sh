#!/usr/bin/env bash
# The report page as a reader sees it: rendered from the fixture runs (demo
# and model), screenshotted by headless Chromium, and the picture checked by
# report/check: the verdict badge at the top, every column's curves drawn
# (only there when the SVG plots loaded), no blank stretch.
# timeout: 180
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v gnuplot >/dev/null || skip "gnuplot not installed (mk/deps report)"
command -v chromium >/dev/null || skip "chromium not installed (mk/deps report)"
report=$top/report

cp -r "$FIXTURES/report/demo" "$TEST_TMP/demo"
"$report/summarize" "$TEST_TMP/demo" || fail "summarize exited $?"
cp -r "$FIXTURES/report/model" "$TEST_TMP/model"
for d in demo model; do
	"$report/render" "$TEST_TMP/$d" >/dev/null || fail "render ($d) exited $?"
	"$report/check" --screenshot "$TEST_TMP/$d" || fail "the $d page does not show in Chromium"
	[ -s "$TEST_TMP/$d/report.png" ] || fail "no screenshot of the $d page"
done

# The picture check sees it when the plots do not load (broken images).
rm -r "$TEST_TMP/demo/plots"
"$report/screenshot" "$TEST_TMP/demo/report.html" "$TEST_TMP/broken.png" 1000 2600 ||
	fail "screenshot exited $?"
pylib report_picture refused "$TEST_TMP/demo" "$TEST_TMP/broken.png" ||
	fail "check passed a page without plots"
# The "why" timeline of the patched kernel's worst wait, whose holder was
# throttled for a whole quota period (17 ms) around a wait of 55 us: on
# the wait's own axis the boost's bar has width. The stock kernel's worst
# wait, no boost, is the picture with none.
pylib report_picture why patched "$FIXTURES/report/why-patched-throttled.json" "$TEST_TMP/why-patched.svg" ||
	fail "could not draw the patched timeline"
"$report/screenshot" "$TEST_TMP/why-patched.svg" "$TEST_TMP/why-patched.png" 840 300 || fail "screenshot exited $?"
pylib report_picture boost "$TEST_TMP/why-patched.png" || fail "the patched kernel's boost is not drawn"
jq 'del(.boost) | .holder_state = {"state": "throttled", "throttled_s": .wait.begin_s, "unthrottled_s": .wait.end_s}' \
	"$FIXTURES/report/why-patched-throttled.json" >"$TEST_TMP/no-boost.json"
pylib report_picture why stock "$TEST_TMP/no-boost.json" "$TEST_TMP/no-boost.svg" || fail "could not draw"
"$report/screenshot" "$TEST_TMP/no-boost.svg" "$TEST_TMP/no-boost.png" 840 300 || fail "screenshot exited $?"
! pylib report_picture boost "$TEST_TMP/no-boost.png" 2>/dev/null || fail "a timeline without a boost passed the check"
pass "both pages render in headless Chromium with their plots, and the patched kernel's boost has width"
