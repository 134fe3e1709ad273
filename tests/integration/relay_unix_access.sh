#!/usr/bin/env bash
# Who may reach relay's unix:///PATH listeners. relay as a user of its own
# under umask 077 (relay.service's User= and UMask=0077) makes a
# unix:///PATH socket file of mode 0700, which any other user is refused
# ("Permission denied": what loadgen@.service met). unix_mode and
# unix_group give it the mode and group asked for (srw-rw----, relay's
# user and the group), so that a client whose primary or supplementary
# group it is reaches it and another still does not; a group relay is
# not in is refused, leaving no file. relay's own directory takes no file
# of another user's.
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

pass "unix:///PATH listeners: the mode and group asked for, and who they let in"
