#!/usr/bin/env bash
# relay run by hand as root creates its heartbeat and stats files without
# opening their names: a symlink (or a hard link) planted at the path is
# replaced by relay's own file, and the file it pointed to keeps its bytes.
# A directory relay cannot write is an error naming the path, exit 71.
# timeout: 60
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

d=$TEST_TMP/run
mkdir -p "$d"
victim=$TEST_TMP/victim
printf 'precious\n' >"$victim"
for f in hb relay.json relay.rx_latency.hgrm relay.timeseries.csv relay.metrics.prom; do
	ln -s "$victim" "$d/$f"
done
ln "$victim" "$d/relay.tick_lateness.hgrm"

p=$(free_udp_port)
start_relay --listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 \
	--allow-non-rt --heartbeat "$d/hb" --stats-file "$d/relay.json"
udptool ping --to "127.0.0.1:$p" --count 3 --expect-prefix "" || fail "echo"
[ "$(cat "$victim")" = precious ] || fail "the heartbeat went through the symlink"
{ [ ! -L "$d/hb" ] && [ -f "$d/hb" ]; } || fail "the heartbeat is not a file of its own"
[ "$(head -c 8 "$d/hb")" = RELAYHB1 ] || fail "the heartbeat file has no header"
[ "$(stat -c %a "$d/hb")" = 644 ] || fail "heartbeat mode $(stat -c %a "$d/hb")"
stop_relay
[ "$(cat "$victim")" = precious ] || fail "a stats file went through a link"
for f in relay.json relay.rx_latency.hgrm relay.timeseries.csv relay.tick_lateness.hgrm relay.metrics.prom; do
	{ [ ! -L "$d/$f" ] && [ -s "$d/$f" ]; } || fail "$f is not a file of its own"
done
[ "$(stat -c %h "$victim")" = 1 ] || fail "the hard link was written through"
json_ok "$d/relay.json" 'length == 1 and (.[0] | type) == "object"' "stats file is not a JSON object" --slurp
# nothing left behind but the files themselves
# shellcheck disable=SC2010 # the relay names them: no odd characters
left=$(ls "$d" | grep -c -v -x -e hb -e relay.json -e 'relay\.[a-z_]*\.hgrm' \
	-e relay.timeseries.csv -e relay.metrics.prom)
[ "$left" = 0 ] || fail "temporary files left: $(ls "$d")"

# a directory relay cannot create files in
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$TEST_TMP/ro" && chmod 755 "$TEST_TMP/ro" && chmod 755 "$TEST_TMP"
	expect_exit 71 "heartbeat $TEST_TMP/ro/hb: cannot create a file next to it" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$RELAY" \
		--listen "udp://127.0.0.1:$p" --upstream echo --cpus 0 --allow-non-rt \
		--admin off --heartbeat "$TEST_TMP/ro/hb"
fi
pass "heartbeat and stats files replace what is at their names"
