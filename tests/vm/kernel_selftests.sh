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
python3 - "$out" <<'PY' || fail "selftests.json is wrong, or a cost boot ran"
import glob, json, os, sys
out = sys.argv[1]
s = json.load(open(os.path.join(out, "selftests.json")))
p = s["kernels"]["patched"]
assert list(s["kernels"]) == ["patched"], list(s["kernels"])
assert p["outcome"] == "ok" and p["failed"] == 0 and p["passed"] > 0, p
assert "relay-patched" in p["kernel_release"], p["kernel_release"]
assert not glob.glob(os.path.join(out, "cost-*")), "--no-cost ran a cost boot"
PY
pass "patched 6.12 kernel passed every epoll selftest ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernels"]["patched"]["passed"])' "$out/selftests.json") passed)"
