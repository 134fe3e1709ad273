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
pass "both pages render in headless Chromium with their plots"
