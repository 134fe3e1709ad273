#!/usr/bin/env bash
# kernel/vm/boot takes a guest's results as data: each frame of the
# hostile corpus (tests/fixtures/hostile/vm-results, written by
# tests/pylib/hostile_archives.py) is sent by a stand-in QEMU first on
# PATH, and boot must end with the case's exit status and outcome, always
# write boot.json, and leave under results/ only regular files and
# directories of its caller's, with no setuid, setgid or sticky bit and no
# write for others, nothing outside results/, and no results/ at all when
# it refused the archive.
# timeout: 120
# variants: release
# check: fast
. "$(dirname "$0")/../lib.sh"
corpus=$FIXTURES/hostile/vm-results
cd "$TEST_TMP" || exit 1
mkdir bin
# The stand-in writes $STUB_FRAME to the results port (-chardev ...,id=res,path=P)
# and exits as a guest that powered off would.
cat >bin/qemu-system-x86_64 <<'STUB'
#!/bin/sh
for a; do
	case $a in file,id=res,path=*) cp "$STUB_FRAME" "${a#file,id=res,path=}" ;; esac
done
exit 0
STUB
chmod +x bin/qemu-system-x86_64
: >bzImage
: >initrd
me=$(id -u)
# Every case at once: each boot polls its stand-in once a second.
cases=()
while IFS=$'\t' read -r name _; do
	case $name in '#'*|'') continue ;; esac
	cases+=("$name")
	mkdir "$TEST_TMP/$name"
	(
		STUB_FRAME=$corpus/$name.frame PATH=$TEST_TMP/bin:$PATH \
			"$top/kernel/vm/boot" --kernel bzImage --initrd initrd --out "$TEST_TMP/$name/guest" \
			--timeout 30 --memory-mb 128 >"$TEST_TMP/$name/log" 2>&1
		echo $? >"$TEST_TMP/$name/rc"
	) &
done <"$corpus/expect.tsv"
wait
n=0
while IFS=$'\t' read -r name rc outcome what; do
	case $name in '#'*|'') continue ;; esac
	out=$TEST_TMP/$name
	got=$(cat "$out/rc")
	[ "$got" = "$rc" ] || { cat "$out/log" >&2; fail "$name ($what): exit $got, expected $rc"; }
	[ "$(cat "$out/guest/outcome")" = "$outcome" ] ||
		fail "$name ($what): outcome '$(cat "$out/guest/outcome")', expected '$outcome'"
	json_ok "$out/guest/boot.json" ".outcome == \"$outcome\"" "$name: boot.json with its outcome"
	if [ "$outcome" = no-results ]; then
		[ ! -e "$out/guest/results" ] || fail "$name ($what): refused, yet results/ was left"
	else
		odd=$(find "$out/guest/results" \( ! -type f ! -type d \) -o ! -user "$me" -o -perm /7002 -print)
		[ -z "$odd" ] || fail "$name ($what): not plain data under results/: $odd"
	fi
	n=$((n + 1))
done <"$corpus/expect.tsv"
[ "${#cases[@]}" = "$n" ] || fail "ran ${#cases[@]} cases, checked $n"
leaked=$(find "$TEST_TMP" -name escaped)
[ -z "$leaked" ] || fail "a file outside results/: $leaked"
[ "$n" -ge 15 ] || fail "only $n cases in $corpus/expect.tsv"
pass "$n hostile results frames: each ended as expected, nothing but plain data kept"

r=$TEST_TMP/plain/guest/results
[ "$(cat "$r/scenario.json")" = '{"ok": true}' ] || fail "plain: scenario.json not as sent"
modes=$(stat -c %a "$r/sub/tool" "$r/scenario.json" | tr '\n' ' ')
[ "$modes" = "755 644 " ] || fail "plain: modes $modes, not 755 644"
r=$TEST_TMP/setuid-root/guest/results
[ "$(stat -c %a "$r/tool")" = 755 ] || fail "setuid-root: tool is $(stat -c %a "$r/tool"), not 755"
[ -f "$TEST_TMP/octal-bytes/guest/results/scenario.json" ] || fail "octal-bytes: results not unpacked"
[ -f "$TEST_TMP/guest-failed/guest/results/sub/tool" ] || fail "guest-failed: its results were not kept"
pass "the files came through whole, 0755 and 0644, the setuid bit gone"
