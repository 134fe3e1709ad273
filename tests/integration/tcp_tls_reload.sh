#!/usr/bin/env bash
# SIGHUP reads certificates, keys and CA files again: a certificate renewed
# at the same path is served to new clients while a connection made before
# the reload keeps working; a renewal that does not load (a key that does
# not match) changes nothing and says why, and so does a tls:// listener on
# a tcp:// listener's port; a first tls:// listener can be added without a
# restart; a CA file replaced by one the upstream's certificate does not
# chain to makes new upstream handshakes fail.
# timeout: 120
# check: fast
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
. "$(dirname "$0")/tcp_lib.sh"
need_tcp_tools
make_test_certs

live=$TEST_TMP/live
mkdir -p "$live"
cp "$CERTS/server.pem" "$live/cert.pem"
cp "$CERTS/server.key" "$live/key.pem"
cp "$CERTS/ca.pem" "$live/ca.pem"
chmod 600 "$live/key.pem"

up=$(free_tcp_port)
tl=$(free_tcp_port)
tl2=$(free_tcp_port)
pl=$(free_tcp_port)
sup=$(free_tcp_port)
start_nginx web "$up"
start_nginx tlsweb "$sup" "$CERTS/server.pem"
conf=$TEST_TMP/relay.ini
write_conf() {	# write_conf LISTEN...
	{
		echo "[relay]"
		for l in "$@"; do echo "listen = $l"; done
		echo "upstream = tls://localhost:$sup"
		echo "ca = $live/ca.pem"
		echo "cert = $live/cert.pem"
		echo "key = $live/key.pem"
	} >"$conf"
}
write_conf "tcp://127.0.0.1:$pl" "tls://127.0.0.1:$tl"
start_relay --config "$conf" --cpus 0 --allow-non-rt

# served PORT: the SHA-256 fingerprint of the certificate a new client gets.
served() {
	openssl s_client -connect "127.0.0.1:$1" -servername localhost </dev/null 2>/dev/null |
		openssl x509 -noout -fingerprint -sha256
}
fp() { openssl x509 -in "$1" -noout -fingerprint -sha256; }
hup() {	# hup PATTERN: SIGHUP, then wait for PATTERN in the log
	kill -HUP "$RELAY_PID"
	wait_for 5 grep -q "$1" "$TEST_TMP/relay.log" ||
		{ cat "$TEST_TMP/relay.log"; fail "no '$1' after SIGHUP"; }
}
[ "$(served "$tl")" = "$(fp "$CERTS/server.pem")" ] || fail "not serving the first certificate"

# A client that holds one TLS connection across the reload.
pylib_bg net tls-keep "$tl" "$CERTS/ca.pem" \
	"$TEST_TMP/phase1" "$TEST_TMP/phase2" "$TEST_TMP/client-ok" --wait 10
client=$!
wait_for 5 test -e "$TEST_TMP/phase1" || fail "long-lived client did not start"

# Renewal in place (same key, another certificate), and a new TLS listener.
cp "$CERTS/wrongname.pem" "$live/cert.pem"
write_conf "tcp://127.0.0.1:$pl" "tls://127.0.0.1:$tl" "tls://127.0.0.1:$tl2"
hup "reloaded (1 added, 0 removed)"
[ "$(served "$tl")" = "$(fp "$CERTS/wrongname.pem")" ] || fail "the renewed certificate is not served"
[ "$(served "$tl2")" = "$(fp "$CERTS/wrongname.pem")" ] || fail "the added TLS listener"
touch "$TEST_TMP/phase2"
wait "$client" || fail "the connection made before the reload broke"
[ -e "$TEST_TMP/client-ok" ] || fail "long-lived client did not finish"

# A key that does not match: refused, the running certificate stays.
cp "$CERTS/other.key" "$live/key.pem"
hup "reload failed, keeping the running configuration: key .* does not match"
[ "$(served "$tl")" = "$(fp "$CERTS/wrongname.pem")" ] || fail "a refused reload changed the certificate"
cp "$CERTS/server.key" "$live/key.pem"

# A tls:// listener on the plain listener's port would split its
# connections: refused, and the plain listener below still answers.
write_conf "tcp://127.0.0.1:$pl" "tls://127.0.0.1:$tl" "tls://127.0.0.1:$tl2" "tls://127.0.0.1:$pl"
hup "reload failed, keeping the running configuration: .*listen: 'tls://127.0.0.1:$pl' is on the port of"
write_conf "tcp://127.0.0.1:$pl" "tls://127.0.0.1:$tl" "tls://127.0.0.1:$tl2"

# The upstream through TLS, verified against ca.pem; then against a CA it
# does not chain to: new connections are refused at the upstream handshake.
body=$(curl -sf "http://127.0.0.1:$pl/") || fail "plain listener to the TLS upstream"
[ "$body" = ok ] || fail "upstream answered '$body'"
cp "$CERTS/rogue-ca.pem" "$live/ca.pem"
hup "reloaded (0 added, 0 removed)"
curl -sf -m 5 "http://127.0.0.1:$pl/" >/dev/null && fail "the upstream verified against a CA that did not sign it"
expect_metric 'relay_tcp_closed_total{listener="tcp://127.0.0.1:'"$pl"'",reason="upstream_tls"}' -ge 1
stop_relay
pass "SIGHUP picks up renewed certificates and CA files; a bad one changes nothing"
