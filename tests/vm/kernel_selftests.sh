#!/bin/bash
# timeout: 3000
# needs: kernels
# The kernel's own epoll selftests in a QEMU guest: all must pass on the
# patched 6.12 kernel. The stock kernel's result would only be reported, so
# its selftests boot is left out here, and so are the four cost boots (perf
# bench epoll wait, epoll-stress): the cost of the fix is a benchmark that
# nothing here judges (make kernel-selftests runs both; the summary's
# intervals are tested on fixed inputs in kernel_selftests_summary).
# It runs beside the timed tests: the guest keeps the host's clock, but the
# verdict is the selftests' pass or fail.
# lane: side
. "$(dirname "$0")/../lib.sh"
need_root "builds the kernels into ${RELAY_CACHE:-/var/cache/relay}, creates device nodes"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
out=$top/build/kernel/selftests-6.12
"$top/kernel/selftests/run" --line 6.12 --selftests patched --no-cost --out "$out" || fail "kernel/selftests/run exited $? (see $out)"
s=$out/selftests.json
"$top/mk/py" report.formats check "$s" >/dev/null || fail "selftests.json does not fit its reader (docs/formats.md)"
json_ok "$s" '.kernels | keys_unsorted == ["patched"]' \
	"selftests.json is wrong: kernels $(jq -c '.kernels | keys_unsorted' "$s"), expected only patched"
json_ok "$s" '.kernels.patched | .outcome == "ok" and .failed == 0 and .passed > 0' \
	"selftests.json is wrong: patched $(jq -c '.kernels.patched | {outcome, failed, passed}' "$s")"
json_ok "$s" '.kernels.patched.kernel_release | contains("relay-patched")' \
	"selftests.json is wrong: kernel_release $(jq -r .kernels.patched.kernel_release "$s")"
for c in "$out"/cost-*; do
	[ -e "$c" ] && fail "--no-cost ran a cost boot: ${c##*/}"
done
pass "patched 6.12 kernel passed every epoll selftest ($(jq -r .kernels.patched.passed "$s") passed)"
