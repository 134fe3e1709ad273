#!/bin/bash
# timeout: 3000
# needs: kernels
# The kernel's own epoll selftests in QEMU guests: all must pass on the
# patched 6.12 kernel. The stock kernel's result would only be reported, so
# its selftests boot is left out here (make kernel-selftests runs it). Also collects
# the cost benchmarks (perf bench epoll wait, epoll-stress) as JSON, one
# round in each of the four cost boots (two per kernel: enough for an
# interval; make kernel-selftests runs two).
# It runs beside the timed tests: the guests keep the host's clock, but
# the verdict is the selftests' pass or fail and the cost figures' shape;
# the figures themselves, taken on a shared host, are not judged here.
# lane: side
. "$(dirname "$0")/../lib.sh"
need_root "builds the kernels into ${RELAY_CACHE:-/var/cache/relay}, creates device nodes"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
out=$top/build/kernel/selftests-6.12
"$top/kernel/selftests/run" --line 6.12 --rounds 1 --selftests patched --out "$out" || fail "kernel/selftests/run exited $? (see $out)"
python3 - "$out/cost.json" <<'PY' || fail "cost.json has no interval for a figure"
import json, sys
c = json.load(open(sys.argv[1]))
names = [x["name"] for x in c["comparison"]]
assert "perf bench epoll wait -t 4" in names and len(names) == 5, names
for x in c["comparison"]:
    assert x["samples"] == [2, 2] and x["low"] <= x["ratio"] <= x["high"], x
    assert x["verdict"] in ("inconclusive", "patched slower", "patched faster"), x
PY
pass "patched 6.12 kernel passed every epoll selftest; each cost figure has an interval"
