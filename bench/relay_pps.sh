#!/usr/bin/env bash
# relay against a direct path, nginx's stream UDP proxy and socat, in one
# run on loopback: the highest rate each forwards (one way, 64-byte
# datagrams, two sendmmsg sender threads) and the round-trip latency it adds
# (ping-pong through it to an echo server). The rate is measured for two
# kinds of traffic:
#   datagram   every write is one datagram and the sink reads them one by
#              one: each forward costs a full loopback delivery, whoever
#              forwards;
#   segmented  senders write runs of 64 datagrams (UDP_SEGMENT) and the
#              sink takes runs (UDP_GRO), as QUIC stacks do; relay runs with
#              --udp-gro and keeps the runs, nginx and socat read and write
#              the datagrams one by one. Every rate counts datagrams.
# The relay under test runs on
# CPU 1 (one loop; nginx one worker; socat pinned there); senders, sink and
# pinger on CPU 0. The echo server shares CPU 1 with the relay, so the
# direct and the relayed round trip cross between the CPUs equally often.
# Median of 3 runs.
#
# relay-nobudget is relay with --rt-budget 100: the ratio of the two is
# what the budget (the drop to SCHED_OTHER when overloaded) costs on a CPU
# relay has to itself, where it should cost nothing.
#
# Targets: relay >= 2x nginx stream pps, >= 10x socat pps (each kind of
# traffic checked on its own), < 10 us added p50, relay >= 0.95x
# relay-nobudget.
# Prints a table, writes build/bench/relay_pps.json; exits 1 if a target is
# missed, 2 if a tool is missing or a run failed.
set -u
cd "$(dirname "$0")/.." || exit 2
SECONDS_RUN=${RELAY_BENCH_SECONDS:-5}
RUNS=${RELAY_BENCH_RUNS:-3}
PINGS=${RELAY_BENCH_PINGS:-20000}
SIZE=64
BENCH=relay_pps
. "$(dirname "$0")/lib.sh"
udp_bench_needs nginx socat

# cpu1_busy: jiffies CPU 1 spent not idle (user+nice+system+irq+softirq+steal).
cpu1_busy() { awk '$1 == "cpu1" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# pps KIND TRAFFIC: "RATE BUSY OFFERED" - the sink's receive rate with the
# senders at full speed, the fraction of CPU 1 (where KIND runs) busy
# meanwhile, and the rate the senders offered (datagrams per second).
pps() {
	local kind=$1 traffic=$2 sink target segments=1 sink_gro='' relay_flag=''
	if [ "$traffic" = segmented ]; then
		segments=64 sink_gro=gro relay_flag=--udp-gro
	fi
	sink=$(port udp)
	target=$sink
	# Nothing in between on the direct path: the sink itself takes CPU 1.
	local sink_cpu=0
	[ "$kind" = direct ] && sink_cpu=1
	taskset -c $sink_cpu chrt -f 10 "$blast" sink "$sink" $((SECONDS_RUN + 1)) 1.5 $sink_gro >"$tmp/sink.out" &
	local sp=$!
	if [ "$kind" != direct ]; then
		target=$(port udp)
		start_proxy "$kind" "$target" "$sink" $relay_flag
	fi
	local b0 t0 b1 t1
	b0=$(cpu1_busy); t0=$(date +%s%N)
	taskset -c 0 "$blast" send 127.0.0.1 "$target" "$SECONDS_RUN" $SIZE 2 $segments >"$tmp/sent.out"
	b1=$(cpu1_busy); t1=$(date +%s%N)
	wait $sp
	[ "$kind" = direct ] || stop_proxy
	echo "$(cat "$tmp/sink.out") $(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.3f", b / hz / (t / 1e9) }') $(( $(cat "$tmp/sent.out") / SECONDS_RUN ))"
}

# rtt KIND: "p50 p99" round trip in us through KIND to an echo server.
rtt() {
	local kind=$1 echo_port target
	echo_port=$(port udp)
	taskset -c 1 "$blast" echo "$echo_port" 60 &
	local ep=$!
	pids+=("$ep")
	target=$echo_port
	if [ "$kind" != direct ]; then
		target=$(port udp)
		start_proxy "$kind" "$target" "$echo_port"
	fi
	taskset -c 0 "$blast" ping 127.0.0.1 "$target" "$PINGS" $SIZE
	local rc=$?
	[ "$kind" = direct ] || stop_proxy
	kill $ep; wait $ep 2>/dev/null
	return $rc
}

kinds=(direct relay relay-nobudget nginx socat)
step=0 steps=$((${#kinds[@]} * RUNS * 3))
for k in "${kinds[@]}"; do
	for r in $(seq "$RUNS"); do
		for traffic in datagram segmented; do
			progress $((step++)) $steps "$k, $traffic traffic, run $r"
			v=$(pps "$k" $traffic) || exit 2
			echo "$v" >>"$tmp/pps.$traffic.$k"
		done
		progress $((step++)) $steps "$k, ping-pong, run $r"
		res=$(rtt "$k") || { echo "relay_pps: ping through $k failed"; exit 2; }
		echo "$res" >>"$tmp/rtt.$k"
	done
done

mk/py bench.summary relay_pps "$out/relay_pps.json" "$SIZE" "$RUNS" "$tmp"
