#!/usr/bin/env bash
# Counts per listener and per upstream: two UDP listeners (IPv4 and IPv6
# loopback) and a tcp:// one, known traffic through each, the exact numbers
# in /metrics, /stats and the stats file; a reload that removes a listener
# and changes the upstream keeps the other listener's and the old
# upstream's counts.
# timeout: 180
# shellcheck disable=SC2154 # NAME_PORT, NAME_PID: set by start_upstream NAME
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"

pylib net ipv6-loopback || skip "no IPv6 loopback"
start_upstream a
start_upstream b
tup=$(free_tcp_port)
# A TCP echo upstream: each connection echoed until EOF.
pylib_bg net echo-server "$tup"
wait_for 5 tcp_up "$tup" || fail "the TCP upstream did not start"
pA=$(free_udp_port)
pB=$(free_udp_port)
pT=$(free_tcp_port)
cpus=0
[ "$(nproc)" -ge 2 ] && cpus=0-1
conf=$TEST_TMP/relay.ini
write_conf() {
	{ echo "[relay]"; for l in "$@"; do echo "listen = $l"; done
	  echo "upstream = udp://127.0.0.1:$UP"
	  echo "upstream = tcp://127.0.0.1:$tup"
	  echo "cpus = $cpus"; echo "allow_non_rt = true"; echo "max_conns = 64"
	  # flows_active is checked: no flow may expire on a slow host.
	  echo "flow_idle_ms = 600000"; } >"$conf"
}
UP=$a_PORT write_conf "udp://127.0.0.1:$pA" "udp://[::1]:$pB" "tcp://127.0.0.1:$pT"
start_relay --config "$conf" --stats-file "$TEST_TMP/relay.json"

# Datagrams of 16 and 20 bytes; the upstream prefixes each reply with "up:".
udptool ping --to "127.0.0.1:$pA" --count 30 --size 16 || fail "ping A"
udptool ping --to "[::1]:$pB" --count 50 --size 20 || fail "ping B"
pylib net send-expect "$pT" "$(printf 't%.0s' {1..100})" --half-close --timeout 10 ||
	fail "TCP through the relay"
A="listener=\"udp://127.0.0.1:$pA\",id=\"0\""
B="listener=\"udp://[::1]:$pB\",id=\"1\""
T="listener=\"tcp://127.0.0.1:$pT\""
UA="upstream=\"udp://127.0.0.1:$a_PORT\""
UB="upstream=\"udp://127.0.0.1:$b_PORT\""
tcp_done() { [ "$(metric "relay_tcp_closed_total{$T,reason=\"done\"}")" = 1 ]; }
wait_for 5 tcp_done || fail "the TCP connection was not closed as done"

for check in "rx_packets_total{$A} 30" "rx_bytes_total{$A} 480" \
	"reply_tx_packets_total{$A} 30" "reply_tx_bytes_total{$A} 570" \
	"flows_created_total{$A} 1" "flows_active{$A} 1" \
	"rx_packets_total{$B} 50" "rx_bytes_total{$B} 1000" \
	"reply_tx_packets_total{$B} 50" "reply_tx_bytes_total{$B} 1150" \
	"flows_created_total{$B} 1" "flows_active{$B} 1" \
	"upstream_tx_packets_total{$UA} 80" "upstream_tx_bytes_total{$UA} 1480" \
	"upstream_reply_packets_total{$UA} 80" "upstream_reply_bytes_total{$UA} 1720" \
	"upstream_drops_total{$UA,reason=\"upstream_refused\"} 0"; do
	expect_metric "relay_udp_${check% *}" -eq "${check##* }"
done
m=$(curl -sf "http://127.0.0.1:$ADMIN_PORT/metrics") || fail "GET /metrics"
n=$(grep -c '^relay_udp_drops_total{' <<<"$m")
reasons=$(grep -c '^relay_drops_total{reason=' <<<"$m")
[ "$n" -eq $((2 * reasons)) ] ||
	fail "$n per-listener drop series, expected $reasons reasons x 2 listeners"
grep '^relay_udp_drops_total{' <<<"$m" | grep -v ' 0$' && fail "drops counted"
expect_metric "relay_tcp_accepted_total{$T}" -eq 1
expect_metric "relay_tcp_rx_bytes_total{$T}" -eq 100
expect_metric "relay_tcp_tx_bytes_total{$T}" -eq 100
expect_metric relay_rx_packets_total -eq 80

# The same numbers in /stats: listeners and upstreams by name.
curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >"$TEST_TMP/stats.json" || fail "GET /stats"
check_json() { pylib listener_stats "$@"; }
check_json "$TEST_TMP/stats.json" before "$pA" "$pB" "$pT" "$a_PORT" "$b_PORT" "$tup" ||
	fail "/stats per listener and upstream"

# Reload: B goes, the upstream becomes b. A's counts stay; a new flow on A
# goes to b, a's counts stay under a.
UP=$b_PORT write_conf "udp://127.0.0.1:$pA" "tcp://127.0.0.1:$pT"
kill -HUP "$RELAY_PID"
wait_for 5 grep -q "reloaded (0 added, 1 removed)" "$TEST_TMP/relay.log" ||
	{ cat "$TEST_TMP/relay.log"; fail "no reload message"; }
expect_metric "relay_udp_rx_packets_total{$A}" -eq 30
[ "$(metric "relay_udp_rx_packets_total{$B}")" = missing ] ||
	fail "the removed listener is still shown"
udptool ping --to "127.0.0.1:$pA" --count 5 --size 16 || fail "ping A after the reload"
expect_metric "relay_udp_rx_packets_total{$A}" -eq 35
expect_metric "relay_udp_upstream_tx_packets_total{$UA}" -eq 80
expect_metric "relay_udp_upstream_tx_packets_total{$UB}" -eq 5
curl -sf "http://127.0.0.1:$ADMIN_PORT/stats" >"$TEST_TMP/stats.json" || fail "GET /stats"
check_json "$TEST_TMP/stats.json" after "$pA" "$pB" "$pT" "$a_PORT" "$b_PORT" "$tup" ||
	fail "/stats after the reload"

stop_relay
check_json "$TEST_TMP/relay.json" after "$pA" "$pB" "$pT" "$a_PORT" "$b_PORT" "$tup" ||
	fail "stats file per listener and upstream"
pass "per-listener and per-upstream counts in /metrics, /stats and the stats file"
