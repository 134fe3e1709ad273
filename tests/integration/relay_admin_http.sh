#!/usr/bin/env bash
# The admin endpoint answers HTTP/1.0 and HTTP/1.1 only (others 505, in
# HTTP/1.1; evhttp refuses HTTP/2 and up with 400 itself), refuses
# CONNECT with 501 and closes (evhttp's own refusal kept the connection
# open and answered what followed), and refuses a body on HEAD with 400,
# closing the connection:
# evhttp does not read HEAD's body, so it would answer the body as a
# second request, a response a proxy in front would hand to another
# client. A GET's body stays refused with 413.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

p=$(free_udp_port)
start_relay --listen udp://127.0.0.1:"$p" --upstream echo --cpus 0 --allow-non-rt

# raw REQUEST: what the endpoint answers to it, the status lines only
raw() { python3 "$FIXTURES/relay/admintool.py" raw --port "$ADMIN_PORT" "$1"; }
# expect WHAT REQUEST STATUS-LINE...: the answers are exactly these, and
# then the server closes (each request here ends its connection)
expect() {
	local what=$1 req=$2 got want
	shift 2
	got=$(raw "$req")
	want=$(printf '%s\n' "$@" closed)
	[ "$got" = "$want" ] || fail "$what: got '${got//$'\n'/ | }', want '${want//$'\n'/ | }'"
	echo "$what: ${got//$'\n'/ | }"
}

smuggled='GET /nowhere HTTP/1.1\r\n\r\n'
expect "HEAD with a body" \
	"HEAD /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\n\r\n$smuggled" \
	"HTTP/1.1 400 Bad Request"
expect "HEAD with a chunked body" \
	"HEAD /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n$smuggled" \
	"HTTP/1.1 400 Bad Request"
expect "GET with a body" \
	"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 26\r\n\r\n$smuggled" \
	"HTTP/1.1 413 Request Entity Too Large"
expect "HTTP/1.9" "GET /healthz HTTP/1.9\r\nHost: x\r\n\r\n" \
	"HTTP/1.1 505 HTTP Version Not Supported"
expect "HTTP/1.2" "GET /healthz HTTP/1.2\r\n\r\n" \
	"HTTP/1.1 505 HTTP Version Not Supported"
expect "HTTP/2.0 (evhttp's own refusal)" "GET /healthz HTTP/2.0\r\n\r\n" \
	"HTTP/1.1 400 Bad Request"
expect "HTTP/0.9" "GET /healthz HTTP/0.9\r\n\r\n" \
	"HTTP/1.1 505 HTTP Version Not Supported"
expect "CONNECT, a request after it" \
	"CONNECT /healthz HTTP/1.1\r\nHost: x\r\n\r\n$smuggled" \
	"HTTP/1.1 501 Not Implemented"
expect "CONNECT in HTTP/1.0" "CONNECT x:1 HTTP/1.0\r\n\r\n$smuggled" \
	"HTTP/1.0 501 Not Implemented"
# what is allowed still is: an empty length, HEAD
expect "GET with an empty length" \
	"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" \
	"HTTP/1.1 200 OK"
expect "HEAD" "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" \
	"HTTP/1.1 200 OK"
expect "HTTP/1.0" "GET /healthz HTTP/1.0\r\n\r\n" "HTTP/1.0 200 OK"
stop_relay
pass "admin speaks HTTP/1.0 and 1.1 and no body on HEAD"
