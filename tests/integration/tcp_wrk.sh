#!/usr/bin/env bash
# wrk through relay to nginx over plain TCP and over TLS (terminated by
# relay), in one relay process that also serves a v6 listener and relays
# UDP: no socket errors, and the requests nginx served are those wrk
# completed plus at most one per connection (in flight when wrk stopped);
# the counters and the latency histogram account for them. openssl s_client
# gets TLS 1.3 by default and 1.2 when it asks, verifies our certificate,
# agrees on ALPN and fetches a page; a TLS 1.1 client is refused.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
. "$(dirname "$0")/tcp_lib.sh"
need_tcp_tools
make_test_certs

up=$(free_tcp_port)
pl=$(free_tcp_port)
tl=$(free_tcp_port)
v6=$(free_tcp_port)
u=$(free_udp_port)
start_nginx web "$up"
start_relay --cpus 0 --allow-non-rt --upstream "tcp://127.0.0.1:$up" \
	--upstream echo --listen "tcp://127.0.0.1:$pl" \
	--listen "tls://127.0.0.1:$tl" --listen "tcp://[::1]:$v6" \
	--listen "udp://127.0.0.1:$u" --cert "$CERTS/server.pem" \
	--key "$CERTS/server.key" --alpn http/1.1

# check_wrk NAME LISTENER URL
check_wrk() {
	local name=$1 listener=$2 url=$3 conns=20 before served
	before=$(nginx_requests web)
	run_wrk -t1 -c$conns -d2s "$url"
	sleep 0.5	# what was in flight reaches nginx
	served=$(( $(nginx_requests web) - before ))
	echo "$name: wrk completed $WRK_REQUESTS, nginx served $served"
	[ "$WRK_ERRORS" -eq 0 ] || { cat "$WRK_OUT"; fail "$name: wrk socket errors"; }
	[ "$WRK_NON2XX" -eq 0 ] || fail "$name: $WRK_NON2XX responses not 2xx"
	[ "$WRK_REQUESTS" -ge 1000 ] || fail "$name: only $WRK_REQUESTS requests"
	{ [ "$served" -ge "$WRK_REQUESTS" ] && [ $((served - WRK_REQUESTS)) -le $conns ]; } ||
		fail "$name: nginx served $served, wrk completed $WRK_REQUESTS"
	# wrk's connections (it opens one more first, to try the URL), all
	# closed now: by wrk's close with responses unread, as resets.
	expect_metric "relay_tcp_accepted_total{listener=\"$listener\"}" -ge $conns
	expect_metric "relay_tcp_active_connections{listener=\"$listener\"}" -eq 0
}

check_wrk plain "tcp://127.0.0.1:$pl" "http://127.0.0.1:$pl/"
lat=$(metric relay_rx_latency_seconds_count)
# One burst each way per request, each timed.
[ "$lat" -ge $((2 * WRK_REQUESTS)) ] || fail "latency count $lat for $WRK_REQUESTS requests"
# Before any datagram: the wake-ups that found stream bytes waiting.
expect_metric relay_wake_latency_seconds_count -ge 1
check_wrk tls "tls://127.0.0.1:$tl" "https://127.0.0.1:$tl/"
expect_metric "relay_tcp_upstream_connected_total{upstream=\"tcp://127.0.0.1:$up\"}" -ge 40

sc() { openssl s_client -connect "127.0.0.1:$tl" -CAfile "$CERTS/ca.pem" \
	-verify_return_error -servername localhost "$@" </dev/null 2>&1; }
out=$(sc -alpn h2,http/1.1)
grep -q 'Verify return code: 0 (ok)' <<<"$out" || { echo "$out"; fail "s_client: not verified"; }
grep -q 'New, TLSv1.3' <<<"$out" || { echo "$out"; fail "s_client: not TLS 1.3"; }
grep -q 'ALPN protocol: http/1.1' <<<"$out" || { echo "$out"; fail "s_client: no ALPN"; }
out=$(sc -tls1_2)
grep -q 'New, TLSv1.2' <<<"$out" || { echo "$out"; fail "s_client: TLS 1.2 refused"; }
page=$(printf 'GET / HTTP/1.0\r\n\r\n' | openssl s_client -quiet -connect "127.0.0.1:$tl" \
	-CAfile "$CERTS/ca.pem" -verify_return_error 2>/dev/null | tail -n 1)
[ "$page" = ok ] || fail "s_client GET through relay: '$page'"
sc -tls1_1 -cipher 'DEFAULT@SECLEVEL=0' >/dev/null && fail "TLS 1.1 accepted"
expect_metric "relay_tcp_handshake_failures_total{listener=\"tls://127.0.0.1:$tl\",reason=\"version\"}" -eq 1

[ "$(curl -sf "http://[::1]:$v6/")" = ok ] || fail "IPv6 listener"
udptool ping --to "127.0.0.1:$u" --count 10 --expect-prefix "" || fail "UDP next to TCP"
stop_relay
pass "wrk plain and TLS through relay, s_client, v6 and UDP alongside"
