#!/usr/bin/env bash
# relay originating TLS to an HTTPS nginx: wrk over plain TCP through it
# with no socket errors and every completed request served; the upstream's
# certificate verified by name and by IP address; the ALPN protocol a TLS
# client chose passed on upstream; the stream keys in a configuration file
# and a listener added by SIGHUP. Upstreams whose certificate has expired,
# names another host or comes from an unknown CA are refused, counted by
# reason, and the client's connection is closed.
# timeout: 120
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
. "$(dirname "$0")/tcp_lib.sh"
need_tcp_tools
make_test_certs

good=$(free_tcp_port)
pl=$(free_tcp_port)
tl=$(free_tcp_port)
start_nginx good "$good" "$CERTS/server.pem"

start_relay --cpus 0 --allow-non-rt --listen "tcp://127.0.0.1:$pl" \
	--listen "tls://127.0.0.1:$tl" --cert "$CERTS/server.pem" \
	--key "$CERTS/server.key" --alpn h2,http/1.1 \
	--upstream "tls://localhost:$good" --ca "$CERTS/ca.pem"
U="upstream=\"tls://127.0.0.1:$good\""
before=$(nginx_requests good)
run_wrk -t1 -c10 -d2s "http://127.0.0.1:$pl/"
sleep 0.5
served=$(( $(nginx_requests good) - before ))
echo "wrk completed $WRK_REQUESTS, nginx served $served"
{ [ "$WRK_ERRORS" -eq 0 ] && [ "$WRK_NON2XX" -eq 0 ]; } || { cat "$WRK_OUT"; fail "wrk errors"; }
[ "$WRK_REQUESTS" -ge 500 ] || fail "only $WRK_REQUESTS requests"
{ [ "$served" -ge "$WRK_REQUESTS" ] && [ $((served - WRK_REQUESTS)) -le 10 ]; } ||
	fail "nginx served $served, wrk completed $WRK_REQUESTS"
expect_metric "relay_tcp_upstream_connected_total{$U}" -ge 10

# ALPN: the protocol the client and relay agreed on is what relay offers
# nginx (nginx logs what it chose).
echo ok >"$TEST_TMP/good/html/alpn"
page=$(printf 'GET /alpn HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' |
	openssl s_client -quiet -alpn http/1.1 -connect "127.0.0.1:$tl" \
	-CAfile "$CERTS/ca.pem" 2>/dev/null | tail -n 1)
[ "$page" = ok ] || fail "GET /alpn: '$page'"
grep -qx '/alpn http/1.1' "$TEST_TMP/good/access.log" ||
	{ tail -n 3 "$TEST_TMP/good/access.log"; fail "ALPN not passed upstream"; }
stop_relay

# By IP address (the certificate names 127.0.0.1 too), and the stream keys
# from a configuration file, mixed with UDP, and reloaded.
u=$(free_udp_port)
cat >"$TEST_TMP/relay.ini" <<INI
[relay]
listen = tcp://127.0.0.1:$pl
listen = udp://127.0.0.1:$u
upstream = tls://127.0.0.1:$good
upstream = echo
ca = $CERTS/ca.pem
max_conns = 100
tcp_buffer = 8192
handshake_timeout_ms = 2000
connect_timeout_ms = 2000
tcp_idle_ms = 10000
INI
"$RELAY" --check-config --config "$TEST_TMP/relay.ini" | grep -q "upstream tls://127.0.0.1:$good" ||
	fail "--check-config with stream keys"
start_relay --cpus 0 --allow-non-rt --config "$TEST_TMP/relay.ini"
[ "$(curl -sf "http://127.0.0.1:$pl/")" = ok ] || fail "upstream verified by IP"
# SIGHUP adds a listener; the one that stays keeps serving.
pl2=$(free_tcp_port)
echo "listen = tcp://127.0.0.1:$pl2" >>"$TEST_TMP/relay.ini"
kill -HUP "$RELAY_PID"
wait_for 5 curl -sf "http://127.0.0.1:$pl2/" || fail "listener added by a reload"
[ "$(curl -sf "http://127.0.0.1:$pl/")" = ok ] || fail "listener kept by a reload"
expect_metric "relay_tcp_accepted_total{listener=\"tcp://127.0.0.1:$pl2\"}" -ge 1
stop_relay

# bad_upstream CERT HOST REASON
bad_upstream() {
	local port
	port=$(free_tcp_port)
	start_nginx "bad$port" "$port" "$CERTS/$1"
	start_relay --cpus 0 --allow-non-rt --listen "tcp://127.0.0.1:$pl" \
		--upstream "tls://$2:$port" --ca "$CERTS/ca.pem"
	curl -sf -m 5 "http://127.0.0.1:$pl/" && fail "$1: served through"
	local u="upstream=\"tls://127.0.0.1:$port\""
	expect_metric "relay_tcp_upstream_handshake_failures_total{$u,reason=\"$3\"}" -eq 1
	expect_metric "relay_tcp_closed_total{listener=\"tcp://127.0.0.1:$pl\",reason=\"upstream_tls\"}" -eq 1
	expect_metric "relay_tcp_upstream_connected_total{$u}" -eq 0
	stop_relay
	[ "$(nginx_requests "bad$port")" -eq 0 ] || fail "$1: a request reached nginx"
}
bad_upstream expired.pem localhost cert_expired
bad_upstream wrongname.pem localhost cert_verify
bad_upstream rogue.pem localhost cert_verify
pass "TLS to the upstream: verified, ALPN passed on, bad certificates refused"
