#!/usr/bin/env bash
# kernel/build --print-images, in a cache of its own (RELAY_CACHE) with
# results made here by hand, so no kernel is built: it builds nothing and
# writes nothing; before a result is there it exits 9 naming the line, the
# result it looked for and what builds it (saying so when a build of it
# runs now); with a result it prints "stock PATH" and "patched PATH", the
# bzImages (--host: the packages) in the directory --print-dir names, and
# for a historical line "historical PATH", its one image, saying so; a
# result missing an image is refused, and so is --print-images beside
# --print-dir or --check-only; another config fragment is another result.
# timeout: 300
# lane: side
# variants: release
# check: fast
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
build=$top/kernel/build
export RELAY_CACHE=$TEST_TMP/cache

# run NAME ARGS...: kernel/build ARGS, its status in $rc, its output in
# $TEST_TMP/NAME.out and .err.
run() {
	local name=$1; shift
	rc=0
	"$build" "$@" >"$TEST_TMP/$name.out" 2>"$TEST_TMP/$name.err" || rc=$?
}
# refused NAME STATUS PATTERN: the run NAME exited STATUS, printed nothing
# and said PATTERN (an extended regex) on stderr.
refused() {
	[ "$rc" = "$2" ] || { cat "$TEST_TMP/$1.err" >&2; fail "$1: exit $rc, expected $2"; }
	[ ! -s "$TEST_TMP/$1.out" ] || fail "$1: printed $(cat "$TEST_TMP/$1.out")"
	grep -qE "$3" "$TEST_TMP/$1.err" || { cat "$TEST_TMP/$1.err" >&2; fail "$1: no '$3' in its message"; }
	pass "$1: exit $rc: $(head -n 1 "$TEST_TMP/$1.err")"
}
# result_dir NAME: the result directory the message of the run NAME names.
result_dir() { sed -n 's|.*(no \(/[^ ]*\)/manifest\.json.*|\1|p' "$TEST_TMP/$1.err"; }

run none --line 6.12 --print-images
refused none 9 "^kernel/build: error: linux 6.12: the stock and patched images are not built yet \(no $RELAY_CACHE/kernels/6\.12-[0-9a-f]{16}/manifest\.json\).*make kernels"
[ ! -e "$RELAY_CACHE" ] || fail "--print-images wrote into the cache: $(find "$RELAY_CACHE")"
dir=$(result_dir none)

# A result as kernel/build leaves it, as far as --print-images looks.
mkdir -p "$dir"
echo '{}' >"$dir/manifest.json"
echo stock >"$dir/bzImage-stock"
echo patched >"$dir/bzImage-patched"
run built --line 6.12 --print-images
[ "$rc" = 0 ] || { cat "$TEST_TMP/built.err" >&2; fail "built: exit $rc"; }
printf 'stock %s\npatched %s\n' "$dir/bzImage-stock" "$dir/bzImage-patched" >"$TEST_TMP/want"
diff -u "$TEST_TMP/want" "$TEST_TMP/built.out" || fail "built: not the two images"
run dir --line 6.12 --print-dir
if [ "$rc" != 0 ] || [ "$(cat "$TEST_TMP/dir.out")" != "$dir" ]; then
	fail "--print-dir says '$(cat "$TEST_TMP/dir.out")' (exit $rc), --print-images $dir"
fi
pass "built: $(paste -sd' ' "$TEST_TMP/built.out")"

run both --line 6.12 --print-images --print-dir
refused both 2 'exclude each other'
run check --line 6.12 --check-only --print-images
refused check 2 'exclude each other'

# Another config fragment hashes to another result, not built.
cp "$top/kernel/config/relay-rt.config" "$TEST_TMP/other.config"
echo CONFIG_PRINTK_TIME=y >>"$TEST_TMP/other.config"
run other --line 6.12 --config "$TEST_TMP/other.config" --print-images
refused other 9 'not built yet'
[ "$(result_dir other)" != "$dir" ] || fail "another fragment, the same result $dir"

# A build of it running: it holds the result's lock.
rm "$dir/manifest.json"
lock=$RELAY_CACHE/kernels/.lock-6.12-${dir##*6.12-}
mkfifo "$TEST_TMP/held"
bg flock "$lock" cat "$TEST_TMP/held"
exec 7>"$TEST_TMP/held"
for _ in $(seq 100); do
	flock -n "$lock" true || break
	sleep 0.1
done
run running --line 6.12 --print-images
refused running 9 'not built yet .*a kernel/build of it is running now'
exec 7>&-
echo '{}' >"$dir/manifest.json"

rm "$dir/bzImage-patched"
run partial --line 6.12 --print-images
refused partial 9 "cached result $dir has a manifest but no patched image"

# --host: the packages, in a result of their own.
run host-none --line 6.12 --host --print-images
refused host-none 9 "the stock and patched packages are not built yet \(no $RELAY_CACHE/kernels/6\.12-host-[0-9a-f]{16}/.*make kernel-debs"
hdir=$(result_dir host-none)
mkdir -p "$hdir"
echo '{}' >"$hdir/manifest.json"
for k in stock patched; do
	touch "$hdir/linux-image-6.12.0-relay-${k}_6.12.0-1relay_amd64.deb"
done
run host --line 6.12 --host --print-images
[ "$rc" = 0 ] || { cat "$TEST_TMP/host.err" >&2; fail "host: exit $rc"; }
printf 'stock %s\npatched %s\n' "$hdir/linux-image-6.12.0-relay-stock_6.12.0-1relay_amd64.deb" \
	"$hdir/linux-image-6.12.0-relay-patched_6.12.0-1relay_amd64.deb" >"$TEST_TMP/want"
diff -u "$TEST_TMP/want" "$TEST_TMP/host.out" || fail "host: not the two packages"
pass "host: $(paste -sd' ' "$TEST_TMP/host.out")"

# A historical line (6.1.8-rt: Debian's 6.1.8-1 as shipped): one image,
# named "historical", and a note that there is no stock/patched pair.
run hist-none --line 6.1.8-rt --print-images
refused hist-none 9 "^kernel/build: error: linux 6\.1\.8-rt: the historical image is not built yet \(no $RELAY_CACHE/kernels/6\.1\.8-rt-[0-9a-f]{16}/manifest\.json\).*make kernels KERNEL_LINE=6\.1\.8-rt"
hist=$(result_dir hist-none)
mkdir -p "$hist"
echo '{}' >"$hist/manifest.json"
echo historical >"$hist/bzImage-historical"
run hist --line 6.1.8-rt --print-images
[ "$rc" = 0 ] || { cat "$TEST_TMP/hist.err" >&2; fail "hist: exit $rc"; }
[ "$(cat "$TEST_TMP/hist.out")" = "historical $hist/bzImage-historical" ] ||
	fail "hist: printed '$(cat "$TEST_TMP/hist.out")', expected the one historical image"
grep -q "linux 6.1.8-rt is a historical line: one image, Debian's linux 6.1.8-1 as shipped, no stock/patched pair" \
	"$TEST_TMP/hist.err" || { cat "$TEST_TMP/hist.err" >&2; fail "hist: no note that the line is historical"; }
pass "hist: $(cat "$TEST_TMP/hist.out")"
rm "$hist/bzImage-historical"
run hist-partial --line 6.1.8-rt --print-images
refused hist-partial 9 "cached result $hist has a manifest but no historical image"
run hist-patches --line 6.1.8-rt --patches "$top/kernel/patches/6.1" --print-images
refused hist-patches 2 'linux 6\.1\.8-rt is a historical line .*--patches does not apply to it'
run hist-host --line 6.1.8-rt --host --print-images
refused hist-host 2 'linux 6\.1\.8-rt is a historical line: --host'
