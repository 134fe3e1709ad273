#!/usr/bin/env bash
# loadgen run by hand as root (--cpu-quota needs it) writes its result
# files without opening their names: a symlink or a hard link planted at
# --json, --hgrm, --hlog, --timeseries, sweep's --csv or merge's outputs is
# replaced by loadgen's own file, and the file it pointed to keeps its
# bytes. An output in a directory that does not exist is an error naming
# the path, exit 73.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/loadgen/lib.sh"

d=$TEST_TMP/out
mkdir -p "$d"
victim=$TEST_TMP/victim
printf 'precious\n' >"$victim"

# plant NAME...: a symlink to the victim at each name, a hard link at the
# last one.
plant() {
	local last=${*: -1}
	for f in "${@:1:$#-1}"; do
		ln -s "$victim" "$d/$f"
	done
	ln "$victim" "$d/$last"
}

# owned NAME...: each is a non-empty file of its own, the victim intact,
# nothing but the outputs in the directory.
owned() {
	[ "$(cat "$victim")" = precious ] || fail "an output was written through a link ($*)"
	[ "$(stat -c %h "$victim")" = 1 ] || fail "the hard link was written through ($*)"
	for f in "$@"; do
		if [ -L "$d/$f" ] || [ ! -f "$d/$f" ] || [ ! -s "$d/$f" ]; then
			fail "$f is not a file of its own"
		fi
		[ "$(stat -c %a "$d/$f")" = 644 ] || fail "$f mode $(stat -c %a "$d/$f")"
	done
	[ "$(find "$d" -mindepth 1 -maxdepth 1 | wc -l)" = $# ] ||
		fail "temporary files left: $(find "$d" -mindepth 1 -maxdepth 1)"
	rm -f "${@/#/$d/}"
}

start_echo
target=udp://127.0.0.1:$ECHO_PORT
plant r.json r.hgrm r.uncorrected.hgrm r.timeseries.csv r.hlog
"$LOADGEN" --target "$target" --rate 1000 --duration 0.5 --no-progress \
	--json "$d/r.json" --hgrm "$d/r.hgrm" --hlog "$d/r.hlog" \
	--timeseries "$d/r.timeseries.csv" >/dev/null || fail "run exited $?"
owned r.json r.hgrm r.uncorrected.hgrm r.timeseries.csv r.hlog

plant s.json s.csv s-1000pps.hgrm
"$LOADGEN" sweep --target "$target" --from 1000 --to 1000 --steps 1 \
	--duration 0.5 --slo max=2s --json "$d/s.json" --csv "$d/s.csv" \
	--hgrm "$d/s.hgrm" >/dev/null || fail "sweep exited $?"
owned s.json s.csv s-1000pps.hgrm

hl=$FIXTURES/hlog
plant m.json m.uncorrected.hgrm m.hgrm
"$LOADGEN" merge --json "$d/m.json" --hgrm "$d/m.hgrm" "$hl/host-a.hlog" \
	"$hl/host-b.hlog" >/dev/null || fail "merge exited $?"
owned m.json m.hgrm m.uncorrected.hgrm

status=0
"$LOADGEN" merge --json "$TEST_TMP/none/m.json" "$hl/host-a.hlog" \
	>/dev/null 2>"$TEST_TMP/err" || status=$?
[ "$status" = 73 ] || fail "merge into a missing directory exited $status, not 73"
grep -qF "$TEST_TMP/none/m.json: cannot create a file next to it: No such file or directory" \
	"$TEST_TMP/err" || fail "the error does not name the path: $(cat "$TEST_TMP/err")"
pass "run, sweep and merge outputs replace planted links, never write through them"
