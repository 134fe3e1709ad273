#!/usr/bin/env bash
# Fuzz the config parser (libFuzzer, clang, ASan+UBSan) for 20 s from the
# seed corpus in tests/fuzz/corpus/conf; in the ASan pass of the runner only
# replay the corpus (the fuzzing itself already ran in the first pass).
# timeout: 180
. "$(dirname "$0")/../lib.sh"
command -v clang >/dev/null || skip "clang not installed (mk/packages/test.txt)"
cd "$top"
bin=$TEST_TMP/fuzz_conf
clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Ilib -Iserver $(pkg-config --cflags inih) \
	-o "$bin" tests/fuzz/fuzz_conf.c server/conf.c lib/addr.c lib/rt.c lib/why.c \
	$(pkg-config --libs inih) 2>"$TEST_TMP/build.log" ||
	{ cat "$TEST_TMP/build.log"; fail "cannot build the fuzz target"; }
mkdir -p "$TEST_TMP/corpus"
cp tests/fuzz/corpus/conf/* "$TEST_TMP/corpus/"
if [ "${VARIANT:-release}" = asan ]; then
	"$bin" -runs=0 tests/fuzz/corpus/conf/* >"$TEST_TMP/fuzz.log" 2>&1 ||
		{ tail -n 40 "$TEST_TMP/fuzz.log"; fail "corpus replay crashed"; }
	pass "corpus replayed"
	exit 0
fi
"$bin" -artifact_prefix="$TEST_TMP/" -max_total_time=20 -max_len=4096 -timeout=5 -rss_limit_mb=1024 \
	-dict=tests/fuzz/conf.dict "$TEST_TMP/corpus" >"$TEST_TMP/fuzz.log" 2>&1 ||
	{ tail -n 40 "$TEST_TMP/fuzz.log"; ls "$TEST_TMP"/crash-* 2>/dev/null; fail "the fuzzer found a crash"; }
grep -E '^#[0-9]+.*(DONE|pulse)' "$TEST_TMP/fuzz.log" | tail -n 1
pass "20 s of fuzzing, no crash"
