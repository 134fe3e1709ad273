#!/usr/bin/env bash
# Fuzz the cgroup readers loadgen's quotas rest on (lib/cgroup.c: the
# mount table, a task's cgroup list, the quota knobs, cpu.stat) with
# tests/fuzz/fuzz_cgroup.c: 4 s in the release pass, the seed corpus
# replayed in the ASan pass.
# timeout: 300
# lane: side
. "$(dirname "$0")/../lib.sh"
fuzz_test cgroup
