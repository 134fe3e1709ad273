#!/usr/bin/env bash
# Bad input on relay's stream path, each with its counter and none holding
# up the loop: at start-up a key that does not match its certificate, an
# expired certificate (warned; clients refuse it), a key file others can
# read (warned), a TLS listener without a certificate, more connections
# than descriptors allow; at run time garbage
# instead of a ClientHello, stalled handshakes (slowloris), a client that
# never reads (the relay buffers at most --tcp-buffer, then closes it as
# stalled), an upstream that resets, and file descriptors running out
# (accepting pauses without spinning, then resumes).
# timeout: 180
. "$(dirname "$0")/../lib.sh"
. "$FIXTURES/relay/relay.sh"
. "$(dirname "$0")/tcp_lib.sh"
need_tcp_tools
make_test_certs

up=$(free_tcp_port)
pl=$(free_tcp_port)
tl=$(free_tcp_port)
tls_args=(--cert "$CERTS/server.pem" --key "$CERTS/server.key")

# --- start-up ---
check=("$RELAY" --check-config --listen "tls://127.0.0.1:$tl" --upstream "tcp://127.0.0.1:$up")
expect_exit 78 "does not match certificate" "${check[@]}" --cert "$CERTS/server.pem" --key "$CERTS/other.key"
expect_exit 78 "no such file" "${check[@]}" --cert "$CERTS/none.pem" --key "$CERTS/server.key"
expect_exit 64 "needs a certificate" "${check[@]}"
expect_exit 64 "--tcp-kernel-stamps: 'maybe' is not a boolean" "${check[@]}" "${tls_args[@]}" \
	--tcp-kernel-stamps maybe
# Like haproxy, refuse a connection limit the descriptors cannot carry.
expect_exit 64 "max_conns" prlimit --nofile=512:512 "${check[@]}" --max-conns 1000 \
	--cert "$CERTS/server.pem" --key "$CERTS/server.key"
expect_exit 0 "has expired" "${check[@]}" --cert "$CERTS/expired.pem" --key "$CERTS/server.key"
cp "$CERTS/server.key" "$TEST_TMP/open.key"
chmod 644 "$TEST_TMP/open.key"
expect_exit 0 "readable by everyone" "${check[@]}" --cert "$CERTS/server.pem" --key "$TEST_TMP/open.key"

start_nginx web "$up"
head -c 33554432 /dev/zero >"$TEST_TMP/web/html/big"

# An expired certificate: relay serves it (and said so), clients refuse it.
start_relay --cpus 0 --allow-non-rt --listen "tls://127.0.0.1:$tl" \
	--upstream "tcp://127.0.0.1:$up" --cert "$CERTS/expired.pem" --key "$CERTS/server.key"
grep -q "warning: certificate .*expired.pem has expired" "$TEST_TMP/relay.log" ||
	fail "no warning about the expired certificate"
out=$(openssl s_client -connect "127.0.0.1:$tl" -CAfile "$CERTS/ca.pem" \
	-verify_return_error </dev/null 2>&1) && fail "client accepted an expired certificate"
grep -q "certificate has expired" <<<"$out" || { echo "$out"; fail "s_client: $out"; }
expect_metric "relay_tcp_handshake_failures_total{listener=\"tls://127.0.0.1:$tl\",reason=\"peer_alert\"}" -eq 1
stop_relay

# --- run time ---
start_relay --cpus 0 --allow-non-rt --listen "tcp://127.0.0.1:$pl" \
	--listen "tls://127.0.0.1:$tl" --upstream "tcp://127.0.0.1:$up" "${tls_args[@]}" \
	--handshake-timeout-ms 500 --tcp-idle-ms 1000 --tcp-buffer 16384
L="listener=\"tls://127.0.0.1:$tl\""
P="listener=\"tcp://127.0.0.1:$pl\""
get_tls() { printf 'GET / HTTP/1.0\r\n\r\n' | timeout 5 openssl s_client -quiet \
	-connect "127.0.0.1:$tl" -CAfile "$CERTS/ca.pem" 2>/dev/null | tail -n 1; }

# Garbage: a plain HTTP request to the TLS listener.
pylib net expect-close "$tl" $'GET / HTTP/1.1\r\nHost: x\r\n\r\n' --timeout 3 ||
	fail "garbage: the relay did not close"
expect_metric "relay_tcp_handshake_failures_total{$L,reason=\"not_tls\"}" -eq 1

# Slowloris: 20 handshakes that stop after 3 bytes. While they hang, the
# loop serves others; at the deadline each is closed and counted.
pylib_bg net hold-partial-tls "$tl" 20 "$TEST_TMP/slow.ready" --timeout 5
slow=$!
wait_for 5 test -e "$TEST_TMP/slow.ready" || fail "slowloris clients"
[ "$(get_tls)" = ok ] || fail "a good client was not served during the slowloris"
wait "$slow" || fail "slowloris: handshakes not closed at the deadline"
expect_metric "relay_tcp_handshake_failures_total{$L,reason=\"timeout\"}" -eq 20
expect_metric "relay_tcp_closed_total{$L,reason=\"handshake\"}" -eq 21

# A client that asks for 32 MiB and never reads: what the upstream sent
# beyond what the client's socket took stays in one bounded buffer, and
# after --tcp-idle-ms without progress the connection goes.
rx0=$(metric "relay_tcp_upstream_rx_bytes_total{upstream=\"tcp://127.0.0.1:$up\"}")
tx0=$(metric "relay_tcp_tx_bytes_total{$P}")
pylib net stall-reader "$pl" $'GET /big HTTP/1.1\r\nHost: x\r\n\r\n' \
	--rcvbuf 65536 --pause 2.5 --timeout 5 || fail "never-reading client was not closed"
expect_metric "relay_tcp_closed_total{$P,reason=\"stalled\"}" -eq 1
rx=$(( $(metric "relay_tcp_upstream_rx_bytes_total{upstream=\"tcp://127.0.0.1:$up\"}") - rx0 ))
tx=$(( $(metric "relay_tcp_tx_bytes_total{$P}") - tx0 ))
echo "never-reading client: upstream sent the relay $rx bytes, the relay passed on $tx"
[ "$rx" -lt 33554432 ] || fail "the whole 32 MiB went through"
[ $((rx - tx)) -le 16384 ] || fail "relay held $((rx - tx)) bytes for one connection"

# Out of descriptors: accepting pauses (counted) instead of spinning, and
# resumes when descriptors are back.
loop_tid=$(ps -L -o tid=,cls= -p "$RELAY_PID" | awk '$2 == "FF" || $1 != '"$RELAY_PID"' { print $1; exit }')
# The lowest free descriptor number: every one below it is in use. The
# admin connections of the metric checks above must be gone first, or
# their descriptors come free later, below the limit.
# shellcheck disable=SC2012 # file descriptors: numbers
lowest_free() { ls "/proc/$RELAY_PID/fd" | sort -n |
	awk '$1 != NR - 1 { n = NR - 1; exit } { n = NR } END { print n }'; }
acc0=$(metric "relay_tcp_accepted_total{$P}")
read -r soft hard < <(prlimit --pid "$RELAY_PID" --nofile -o SOFT,HARD --raw --noheadings)
nfd=-1
for _ in $(seq 20); do
	sleep 0.2
	[ "$(lowest_free)" = "$nfd" ] && break
	nfd=$(lowest_free)
done
# Only the soft limit: raising a hard limit back needs a privilege.
prlimit --pid "$RELAY_PID" --nofile="$nfd:$hard" || fail "prlimit"
[ "$(lowest_free)" = "$nfd" ] || fail "relay's descriptors kept changing"
# (Admin requests need descriptors too: only the one below, which the
# reserve descriptor answers.)
cpu() { awk '{ print $14 + $15 }' "/proc/$RELAY_PID/task/$loop_tid/stat"; }
# Each client asks at once: the requests wait in the kernel until relay
# can accept again.
pylib_bg net http-clients "$pl" 5 "$TEST_TMP/fd.ready" --timeout 10
fdc=$!
wait_for 5 test -e "$TEST_TMP/fd.ready" || fail "clients for the descriptor test"
c0=$(cpu)
sleep 1
c1=$(cpu)
# The admin endpoint says why at once instead of leaving a check hanging.
health=$(curl -s -m 5 -w '%{http_code}' "http://127.0.0.1:$ADMIN_PORT/healthz")
[ "$health" = "out of file descriptors
503" ] || fail "/healthz out of descriptors answered '$health'"
prlimit --pid "$RELAY_PID" --nofile="$soft:$hard" || fail "prlimit back"
grep -q "Error from accept" "$TEST_TMP/relay.log" && fail "the admin listener logged accept errors"
echo "loop CPU while out of descriptors: $((c1 - c0)) ticks in 1 s"
[ $((c1 - c0)) -le 10 ] || fail "the loop spun while out of descriptors"
wait "$fdc" || fail "clients were not served once descriptors were back"
expect_metric "relay_tcp_paused_no_fd_total{$P}" -ge 1
expect_metric "relay_tcp_accepted_total{$P}" -eq $((acc0 + 5))
expect_metric "relay_tcp_closed_total{$P,reason=\"connect_failed\"}" -eq 0
stop_relay

# An upstream that resets every connection: the client sees a reset too.
rst=$(free_tcp_port)
pylib_bg net reset-server "$rst"
wait_for 5 tcp_up "$rst" || fail "resetting upstream"
start_relay --cpus 0 --allow-non-rt --listen "tcp://127.0.0.1:$pl" \
	--upstream "tcp://127.0.0.1:$rst"
pylib net expect-reset "$pl" hello --timeout 5 ||
	fail "the upstream's reset did not reach the client"
expect_metric "relay_tcp_closed_total{$P,reason=\"upstream_reset\"}" -eq 1
stop_relay
pass "bad input on the stream path: counted, bounded, never blocking"
