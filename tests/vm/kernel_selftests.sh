#!/bin/bash
# timeout: 3000
# The kernel's own epoll selftests in QEMU guests: all must pass on the
# patched 6.12 kernel; the stock kernel's result is reported. Also collects
# the cost benchmarks (perf bench epoll wait, epoll-stress) as JSON.
. "$(dirname "$0")/../lib.sh"
need_root "builds the kernels into ${RELAY_CACHE:-/var/cache/relay}, creates device nodes"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"
out=$top/build/kernel/selftests-6.12
"$top/kernel/selftests/run" --line 6.12 --out "$out" || fail "kernel/selftests/run exited $? (see $out)"
pass "patched 6.12 kernel passed every epoll selftest"
