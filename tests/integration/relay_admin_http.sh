#!/usr/bin/env bash
# The admin endpoint against the requests of
# tests/fixtures/relay/admin_requests.tsv, each answered as that file says
# and then closed. It answers HTTP/1.0 and HTTP/1.1 only (others 505, in
# HTTP/1.1; evhttp refuses HTTP/2 and up with 400 itself), refuses CONNECT
# with 501 (evhttp's own refusal kept the connection open and answered
# what followed), and refuses with 400 whatever could frame a body on
# HEAD or GET: a length on HEAD, Transfer-Encoding, a second
# Content-Length (evhttp reads the first only: "0" then "26" passed), and
# whitespace in a header name ("Transfer-Encoding : chunked" is another
# header to evhttp, and chunked to a proxy that trims it). evhttp does not
# read HEAD's body, so it would answer the body as a second request, a
# response a proxy in front would hand to another client. A GET's body
# stays refused with 413.
# timeout: 120
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen udp://127.0.0.1:"$p" --upstream echo --cpus 0 --allow-non-rt

# raw REQUEST: what the endpoint answers to it, the status lines only
raw() { python3 "$FIXTURES/relay/admintool.py" raw --port "$ADMIN_PORT" "$1"; }

n=0
while IFS=$'\t' read -r what req statuses; do
	case $what in '#'* | '') continue ;; esac
	got=$(raw "$req")
	want=$(tr '|' '\n' <<<"$statuses"; echo closed)
	[ "$got" = "$want" ] || fail "$what: got '${got//$'\n'/ | }', want '${want//$'\n'/ | }'"
	echo "$what: ${got//$'\n'/ | }"
	n=$((n + 1))
done <"$FIXTURES/relay/admin_requests.tsv"
[ "$n" -ge 20 ] || fail "only $n requests read from admin_requests.tsv"
kill -0 "$RELAY_PID" || fail "relay died"
stop_relay
pass "$n requests: admin speaks HTTP/1.0 and 1.1, and no request frames a body"
