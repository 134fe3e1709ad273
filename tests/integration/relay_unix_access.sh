#!/usr/bin/env bash
# Who may reach relay's unix:// listeners. relay as a user of its own
# under umask 077 (relay.service's User= and UMask=0077) makes a
# unix:///PATH socket file of mode 0700, which any other user is refused
# ("Permission denied": what loadgen@.service met). unix_mode and
# unix_group give it the mode and group asked for (srw-rw----, relay's
# user and the group), so that a client whose primary or supplementary
# group it is reaches it and another still does not. unix_allow takes
# datagrams only from the users and groups it names, at an abstract name
# too (which has no permissions of its own), and the others' are dropped
# and counted (not_allowed); a reload changes it. A program that takes an
# abstract name first keeps relay from listening, and relay says that any
# program may (exit 69); relay's own directory takes no file of another.
# check: fast
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
need_root "relay and its clients as other users"
command -v setpriv >/dev/null || skip "no setpriv(1)"

ruid=12345 group=23456 cuid=34567 other=45678
chmod 0755 "$TEST_TMP"
run=$TEST_TMP/run		# relay's own, as /run/relay is
mkdir -m 0755 "$run"
chown "$ruid:$ruid" "$run"
# relay as its user, in the shared group too, under umask 077
printf '#!/bin/sh\numask 077\nexec setpriv --reuid=%s --regid=%s --groups=%s "%s" "$@"\n' \
	"$ruid" "$ruid" "$group" "$RELAY" >"$TEST_TMP/relay-as"
chmod 0755 "$TEST_TMP/relay-as"
as_relay() { RELAY=$TEST_TMP/relay-as start_relay --cpus 0 --allow-non-rt "$@"; }
# as UID GID GROUPS CMD...: CMD as that user, of group GID and of the
# supplementary GROUPS ("": none)
as() {
	local ids=(--reuid="$1" --regid="$2" --clear-groups)
	[ -z "$3" ] || ids[2]=--groups="$3"
	shift 3
	setpriv "${ids[@]}" "$@"
}
# reaches UID GID GROUPS URL: udptool ping as that user (from a name the
# kernel gives its socket) is answered; its words in $TEST_TMP/client
reaches() {
	as "$1" "$2" "$3" python3 "$FIXTURES/relay/udptool.py" ping --to "$4" \
		--expect-prefix "" --count 3 --timeout 2 >"$TEST_TMP/client" 2>&1
}

# As the umask leaves it: 0700, for relay's user alone.
sock=$run/relay.sock
as_relay --listen "unix://$sock" --upstream echo
[ "$(stat -c '%A %u' "$sock")" = "srwx------ $ruid" ] || fail "the socket file is $(stat -c '%A %u:%g' "$sock")"
reaches "$cuid" "$group" "" "unix://$sock" && fail "a stranger reached a 0700 socket"
grep -q "Permission denied" "$TEST_TMP/client" || fail "not refused by permission: $(cat "$TEST_TMP/client")"
stop_relay

# unix_mode and unix_group: srw-rw---- relay's user, the group.
as_relay --listen "unix://$sock" --upstream echo --unix-mode 0660 --unix-group "$group"
[ "$(stat -c '%A %u %g' "$sock")" = "srw-rw---- $ruid $group" ] ||
	fail "the socket file is $(stat -c '%A %u %g' "$sock"), not srw-rw---- $ruid $group"
reaches "$cuid" "$group" "" "unix://$sock" ||
	fail "a client of the group (primary) did not reach it: $(cat "$TEST_TMP/client")"
reaches "$cuid" "$cuid" "$group" "unix://$sock" ||
	fail "a client of the group (supplementary) did not reach it: $(cat "$TEST_TMP/client")"
reaches "$cuid" "$cuid" "" "unix://$sock" && fail "a client of no group reached a 0660 socket"
grep -q "Permission denied" "$TEST_TMP/client" || fail "not refused by permission: $(cat "$TEST_TMP/client")"
# relay's directory: nobody else can put a file of theirs there
as 65534 65534 "" python3 "$FIXTURES/relay/udptool.py" squat \
	--at "unix://$run/other.sock" --seconds 1 >"$TEST_TMP/client" 2>&1 &&
	fail "another user bound a socket in relay's directory"
grep -q "Permission denied" "$TEST_TMP/client" || fail "not refused by permission: $(cat "$TEST_TMP/client")"
stop_relay
[ ! -e "$sock" ] || fail "relay left its socket file behind"
expect_exit 69 "unix_group: relay must be a member of the group" "$TEST_TMP/relay-as" \
	--listen "unix://$sock" --upstream echo --cpus 0 --allow-non-rt --admin off \
	--unix-group "$other"
[ ! -e "$sock" ] || fail "a refused start left its socket file behind"

# unix_allow, at an abstract name: gid:GROUP lets in that group alone, and
# a reload makes it uid:OTHER.
name=relay-allow-$$
conf=$TEST_TMP/relay.ini
printf '[relay]\nlisten = unix://@%s\nupstream = echo\nunix_allow = gid:%s\n' \
	"$name" "$group" >"$conf"
start_relay --config "$conf" --cpus 0 --allow-non-rt
reaches "$cuid" "$group" "" "unix://@$name" ||
	fail "the group unix_allow names was refused: $(cat "$TEST_TMP/client")"
reaches "$other" "$other" "" "unix://@$name" && fail "a sender unix_allow does not name was answered"
wait_metric 5 'relay_drops_total{reason="not_allowed"}' -eq 1
printf '[relay]\nlisten = unix://@%s\nupstream = echo\nunix_allow = uid:%s, uid:root\n' \
	"$name" "$other" >"$conf"
kill -HUP "$RELAY_PID"
wait_for 5 grep -q "reloaded (0 added, 0 removed)" "$TEST_TMP/relay.log" || fail "no reload"
reaches "$other" "$other" "" "unix://@$name" ||
	fail "the user the reloaded unix_allow names was refused: $(cat "$TEST_TMP/client")"
reaches "$cuid" "$group" "" "unix://@$name" && fail "the group the reload left out was answered"
wait_metric 5 'relay_drops_total{reason="not_allowed"}' -eq 2
udptool ping --to "unix://@$name" --count 3 --expect-prefix "" || fail "root, which unix_allow names, was refused"
expect_exit 64 "65534 is the id every user and group a user namespace does not map" \
	"$RELAY" --listen "unix://@$name" --upstream echo --unix-allow uid:nobody --check-config

# An abstract name taken first: relay cannot listen, and says why.
squatted=relay-squat-$$
bg setpriv --reuid=65534 --regid=65534 --clear-groups python3 \
	"$FIXTURES/relay/udptool.py" squat --at "unix://@$squatted" --seconds 20 \
	>"$TEST_TMP/squat"
wait_for 5 grep -q bound "$TEST_TMP/squat" || fail "the squatter did not bind"
expect_exit 69 "another program holds this name: an abstract name has no owner, so any program may take it first" \
	"$RELAY" --listen "unix://@$squatted" --upstream echo --cpus 0 --allow-non-rt --admin off
stop_relay
pass "unix:// listeners: mode and group, who may send, and an abstract name taken first"
