#!/usr/bin/env bash
# SIGHUP re-reads the config file: a listener is added and one removed, the
# upstream changes, and a flow on a listener that stays moves to the new
# upstream with its next request (its client keeps its address). A broken
# file on reload changes nothing.
# timeout: 60
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

start_upstream a --log "$TEST_TMP/a.log" --prefix a:
start_upstream b --prefix b:
pA=$(free_udp_port)
pB=$(free_udp_port)
pC=$(free_udp_port)
conf=$TEST_TMP/relay.ini
write_conf() {
	{ echo "[relay]"; for l in "$@"; do echo "listen = $l"; done
	  echo "upstream = udp://127.0.0.1:$UP"; echo "cpus = 0"
	  echo "allow_non_rt = true"; } >"$conf"
}
UP=$a_PORT write_conf "udp://127.0.0.1:$pA" "udp://127.0.0.1:$pB"
start_relay --config "$conf"

# A long-lived client on A (its own socket, across the reload): answered
# by a before, by b after (the flow follows the upstream).
pylib_bg net udp-keep "$pA" a: b: "$TEST_TMP/phase1" "$TEST_TMP/phase2" "$TEST_TMP/client-ok" \
	--wait 10
client=$!
wait_for 5 test -e "$TEST_TMP/phase1" || fail "long-lived client did not start"

# Reload: A stays, B goes, C comes, the upstream becomes b.
UP=$b_PORT write_conf "udp://127.0.0.1:$pA" "udp://127.0.0.1:$pC"
kill -HUP "$RELAY_PID"
wait_for 5 grep -q "reloaded (1 added, 1 removed)" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "no reload message"; }
touch "$TEST_TMP/phase2"
wait "$client" || fail "the flow on the kept listener broke across the reload"
[ -e "$TEST_TMP/client-ok" ] || fail "long-lived client did not finish"
udptool ping --to "127.0.0.1:$pC" --count 5 --expect-prefix b: || fail "added listener"
udptool ping --to "127.0.0.1:$pA" --count 5 --expect-prefix b: || fail "new flow on A uses the new upstream"
udptool ping --to "127.0.0.1:$pB" --count 1 --timeout 0.5 >/dev/null &&
	fail "removed listener still answers"
expect_metric relay_flows_closed_total -eq 0
expect_metric relay_flows_moved_total -eq 1
n=$(wc -l <"$TEST_TMP/a.log")
[ "$n" -eq 1 ] || fail "upstream a saw $n datagrams, expected only the one before the reload"

# A broken file: the reload is refused, everything keeps running.
echo "bogus = 1" >>"$conf"
kill -HUP "$RELAY_PID"
wait_for 5 grep -q "reload failed, keeping the running configuration: .*relay.ini:7: unknown key 'bogus'" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "no message for the broken reload"; }
udptool ping --to "127.0.0.1:$pC" --count 3 --expect-prefix b: || fail "after a refused reload"

# A listener whose port is taken: refused as a whole.
hold_port udp "$pB"
UP=$b_PORT write_conf "udp://127.0.0.1:$pA" "udp://127.0.0.1:$pC" "udp://127.0.0.1:$pB"
kill -HUP "$RELAY_PID"
wait_for 5 grep -q "reload failed.*127.0.0.1:$pB.*in use" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "no message for the port in use"; }
kill "$HELD_PID"
udptool ping --to "127.0.0.1:$pC" --count 3 --expect-prefix b: || fail "after a refused reload (port in use)"
stop_relay
pass "reload adds and removes listeners and keeps other flows"
