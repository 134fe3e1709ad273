#!/bin/bash
# timeout: 2400
# needs: kernels
# lane: side
# The stock and patched 6.12 images (built here on first use, about 6
# minutes, then taken from the cache): the trees differed only by the
# series, the final .configs are equal and hold every fragment option, the
# stock eventpoll.o calls the RT rwlock functions and the patched one only
# the RT spinlock, a second build request is answered from the cache, and
# --print-images names the two images.
. "$(dirname "$0")/../lib.sh"
need_root "fetches the source package with apt, writes ${RELAY_CACHE:-/var/cache/relay}"
"$top/mk/deps" kernel >/dev/null || fail "mk/deps kernel"

dir=$("$top/kernel/build" --line 6.12 --print-dir) || fail "kernel/build exited $?"
m=$dir/manifest.json
[ -f "$m" ] || fail "$m missing"
for f in bzImage-stock bzImage-patched config-stock config-patched tools/epoll_wakeup_test tools/perf tools/epoll-stress; do
	[ -s "$dir/$f" ] || fail "$dir/$f missing"
done

pylib kernel_manifest images "$m" || fail "manifest checks"
cmp -s "$dir/config-stock" "$dir/config-patched" || fail "config-stock and config-patched differ"
while read -r opt; do
	grep -qxF "$opt" "$dir/config-patched" || fail "$opt missing from the final .config"
done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$dir/fragment.config")
pass "trees differ only in fs/eventpoll.c; equal .configs with every fragment option"

# The nm proof again, on the images' own build logs: each tree compiled
# fs/eventpoll.o, the patched one little else.
grep -q 'fs/eventpoll.o' "$dir/build-patched.log" || fail "the patched build did not recompile fs/eventpoll.o"
n=$(grep -c '^  CC  ' "$dir/build-patched.log" || true)
[ "$n" -lt 40 ] || fail "the patched build recompiled $n files; expected an incremental build"
pass "patched build recompiled $n files incrementally"

start=$SECONDS
again=$("$top/kernel/build" --line 6.12 --print-dir) || fail "second kernel/build exited $?"
[ "$again" = "$dir" ] || fail "second build gave $again, first $dir"
[ $((SECONDS - start)) -lt 30 ] || fail "cached build request took $((SECONDS - start)) s"
pass "second request answered from the cache in $((SECONDS - start)) s"

# What make test and the drivers read instead of a build's log.
printf 'stock %s\npatched %s\n' "$dir/bzImage-stock" "$dir/bzImage-patched" >"$TEST_TMP/want"
"$top/kernel/build" --line 6.12 --print-images >"$TEST_TMP/images" || fail "kernel/build --print-images exited $?"
diff -u "$TEST_TMP/want" "$TEST_TMP/images" || fail "--print-images does not name the two images of $dir"
pass "--print-images: $(paste -sd' ' "$TEST_TMP/images")"
