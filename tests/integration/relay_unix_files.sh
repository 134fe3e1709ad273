#!/usr/bin/env bash
# The socket files of unix:///PATH listeners over relay's life. One
# deleted while relay runs is reported (/healthz 503 naming it,
# relay_unix_socket_file_present 0) and bound again by SIGHUP, which
# said "0 added, 0 removed" and left the listener unreachable; one
# replaced by a file of someone else's is not bound over, and stays when
# relay exits. A listener a reload removes takes its file with it, and so
# does relay's exit, and a start that fails at a later listener: a file
# is relay's by its inode and birth time, not its path.
# check: fast
# timeout: 90
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

a=$TEST_TMP/a.sock b=$TEST_TMP/b.sock
conf=$TEST_TMP/relay.ini
write_conf() {
	{ echo "[relay]"; for l in "$@"; do echo "listen = unix://$l"; done
	  echo "upstream = echo"; echo "cpus = 0"; echo "allow_non_rt = yes"; } >"$conf"
}
healthz() { curl -s "http://127.0.0.1:$ADMIN_PORT/healthz"; }
present() { metric "relay_unix_socket_file_present{listener=\"unix://$1\",id=\"$2\"}"; }
# reloaded N: SIGHUP, and wait for the Nth reload to end
reloads_ended() { [ "$(grep -c 'reloaded\|reload failed' "$TEST_TMP/relay.log")" -ge "$1" ]; }
reloaded() {
	kill -HUP "$RELAY_PID"
	wait_for 5 reloads_ended "$1" || fail "reload $1 did not end: $(cat "$TEST_TMP/relay.log")"
}

write_conf "$a" "$b"
start_relay --config "$conf"
[ "$(healthz)" = ok ] || fail "/healthz: $(healthz)"
[ "$(present "$a" 0)" = 1 ] || fail "a.sock present: $(present "$a" 0)"

# Deleted: said so until SIGHUP binds it again (a new listener, id 2).
rm "$a"
[ "$(healthz)" = "unix://$a: the socket file relay made there was removed or replaced (SIGHUP binds it again)" ] ||
	fail "/healthz with a.sock gone: $(healthz)"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$ADMIN_PORT/healthz")" = 503 ] ||
	fail "/healthz answers other than 503 with a.sock gone"
[ "$(present "$a" 0)" = 0 ] || fail "a.sock gone, but present is $(present "$a" 0)"
reloaded 1
grep -q "reload: $a: the socket file relay made there was removed or replaced; binding it again" \
	"$TEST_TMP/relay.log" || fail "the reload did not say it binds a.sock again: $(cat "$TEST_TMP/relay.log")"
grep -q "reloaded (1 added, 1 removed)" "$TEST_TMP/relay.log" || fail "$(tail -n 2 "$TEST_TMP/relay.log")"
[ -S "$a" ] || fail "SIGHUP did not bind a.sock again"
udptool ping --to "unix://$a" --count 3 --expect-prefix "" || fail "a.sock bound again does not answer"
[ "$(healthz)" = ok ] || fail "/healthz after the reload: $(healthz)"
[ "$(present "$a" 2)" = 1 ] || fail "a.sock bound again: present is $(present "$a" 2)"

# A listener the reload removes takes its file with it.
write_conf "$a"
reloaded 2
grep -q "reloaded (0 added, 1 removed)" "$TEST_TMP/relay.log" || fail "$(tail -n 2 "$TEST_TMP/relay.log")"
[ ! -e "$b" ] || fail "the listener removed left its file b.sock"

# Replaced by someone else's file: not bound over (the reload fails
# saying why), and left alone at exit.
rm "$a"
echo theirs >"$a"
reloaded 3
grep -q "reload failed, keeping the running configuration: unix://$a: cannot listen: Address already in use" \
	"$TEST_TMP/relay.log" || fail "$(tail -n 2 "$TEST_TMP/relay.log")"
[ "$(cat "$a")" = theirs ] || fail "the reload touched the file put at a.sock"
healthz | grep -q "^unix://$a: the socket file relay made there was removed or replaced" ||
	fail "/healthz: $(healthz)"
stop_relay
[ "$(cat "$a")" = theirs ] || fail "relay's exit removed a file that is not its own"
rm "$a"

# At exit, and when a start fails at a later listener, relay's go.
write_conf "$a" "$b"
start_relay --config "$conf"
stop_relay
left=$(find "$TEST_TMP" -name '*.sock')
[ -z "$left" ] || fail "relay's exit left $left"
mkdir "$b"
expect_exit 69 "unix://$b: cannot listen" "$RELAY" --config "$conf" --admin off
[ ! -e "$a" ] || fail "a start that failed at b.sock left a.sock"
[ -d "$b" ] || fail "the directory at b.sock is gone"
pass "socket files: reported and bound again when gone, removed with their listener and at exit, others' left"
