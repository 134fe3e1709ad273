#!/usr/bin/env bash
# TCP conformance through relay under one loop and two, plain and TLS
# (terminated from the client, originated to the upstream), each end seen
# from the other by tests/fixtures/relay/tcptool.py: the last bytes and
# the FIN together each way, a reset from either side, 100 MB each way
# through slow readers with checksums (and relay's memory bounded while it
# holds the senders back), 1000 connections open at once, and the
# upstream closing first. Loopback only; every wait bounded.
# timeout: 900
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
. "$(dirname "$0")/tcp_lib.sh"
command -v openssl >/dev/null || skip "openssl is not installed (mk/deps tcp)"
make_test_certs

loops=(0)
[ "$(nproc)" -ge 2 ] && loops+=(0-1) || echo "one CPU: the two-loop runs are left out"
# Every wait scales with the build's speed.
secs=$((20 * $(slow_factor)))

# rss_kib PID
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

for cpus in "${loops[@]}"; do
	for kind in tcp tls; do
		up=$(free_tcp_port)
		pl=$(free_tcp_port)
		args=(--listen "$kind://127.0.0.1:$pl" --cpus "$cpus" --allow-non-rt
		      --max-conns 1100 --tcp-idle-ms 60000)
		tool=()
		conns=1000
		if [ "$kind" = tls ]; then
			args+=(--upstream "tls://localhost:$up" --cert "$CERTS/server.pem"
			       --key "$CERTS/server.key" --ca "$CERTS/ca.pem")
			tool=(--tls "$CERTS")
			# Both ends of every TLS handshake are Python's here (about
			# 30 ms a connection on a 2-core host): 1000 on two loops,
			# 250 on one.
			[ "$cpus" = 0 ] && conns=250
		else
			args+=(--upstream "tcp://127.0.0.1:$up")
		fi
		start_relay "${args[@]}"
		rss0=$(rss_kib "$RELAY_PID")
		echo "== $kind, cpus $cpus"
		conform() {
			python3 "$FIXTURES/relay/tcptool.py" conform --relay "$pl" \
				--upstream-port "$up" --conns "$conns" --seconds "$secs" \
				"${tool[@]}" --only "$1" || fail "$kind through loop(s) $cpus"
		}
		conform fin,reset,bulk
		rss1=$(rss_kib "$RELAY_PID")
		echo "relay RSS ${rss0} -> ${rss1} KiB"
		# The 200 MB that went through must not have been held anywhere:
		# a connection holds two 16 KiB buffers (and TLS its records).
		# ASan keeps freed memory in quarantine (up to 256 MiB), so there
		# RSS says nothing.
		[ "$VARIANT" = asan ] || [ $((rss1 - rss0)) -lt 32768 ] ||
			fail "relay grew by $((rss1 - rss0)) KiB"
		conform many
		L="listener=\"$kind://127.0.0.1:$pl\""
		for r in idle stalled handshake connect_failed connect_timeout upstream_tls; do
			expect_metric "relay_tcp_closed_total{$L,reason=\"$r\"}" -eq 0
		done
		expect_metric "relay_tcp_closed_total{$L,reason=\"client_reset\"}" -eq 1
		expect_metric "relay_tcp_closed_total{$L,reason=\"upstream_reset\"}" -eq 1
		none_left() { [ "$(metric "relay_tcp_active_connections{$L}")" = 0 ]; }
		wait_for 10 none_left || fail "connections left open"
		stop_relay
	done
done
pass "TCP conformance: FIN with data, resets, 100 MB slow readers, many connections"
