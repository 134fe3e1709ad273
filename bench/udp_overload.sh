#!/usr/bin/env bash
# UDP forwarders on a shared, overloaded CPU, in one run: each forwarder
# and the sink it forwards to share CPU 1, a sender on CPU 0 offers far more
# than any of them can carry (runs of 64 datagrams of 64 bytes, UDP_SEGMENT;
# every forwarder reads them one by one). What reaches the sink is what the
# forwarder carried while sharing its CPU with its own output.
#   relay          as it comes: SCHED_FIFO within rt_budget
#   relay_nobudget --rt-budget 100: SCHED_FIFO whatever the load (the
#                  receive livelock rt_budget prevents)
#   relay_other    --sched other
#   nginx          stream UDP proxy, one worker; socat, one process per peer
# haproxy has no UDP proxy. Everything runs at nice -19 so that other work
# on the machine weighs little against it.
# relay's sustainable rate in the same layout comes first: a paced rate is
# raised by a quarter until more than 3 % is lost.
# Targets: relay forwards at least 90 % of its sustainable rate while
# overloaded (at least 3x that offered), and at least nginx's and socat's
# rate. Median of RUNS. Prints a table, writes build/bench/udp_overload.json;
# exits 1 if a target is missed, 2 if a tool is missing or a run failed.
set -u
cd "$(dirname "$0")/.." || exit 2
STEP=${UDP_OVERLOAD_SECONDS:-2}
RUNS=${UDP_OVERLOAD_RUNS:-3}
BENCH=udp_overload
. "$(dirname "$0")/lib.sh"
udp_bench_needs nginx socat
proxy_wrap="nice -n -19"

# with KIND: start KIND forwarding to a counting sink, both on CPU 1; sets
# target (its port) and count (the sink's running total).
with() {
	local sink
	sink=$(port udp)
	count=$tmp/count
	rm -f "$count"
	taskset -c 1 nice -n -19 "$blast" count "$sink" 600 "$count" &
	sink_pid=$!
	pids+=("$sink_pid")
	target=$(port udp)
	case $1 in
	relay)          start_proxy relay "$target" "$sink" ;;
	relay_nobudget) start_proxy relay "$target" "$sink" --rt-budget 100 ;;
	relay_other)    start_proxy relay "$target" "$sink" --sched other ;;
	*)              start_proxy "$1" "$target" "$sink" ;;
	esac
	for _ in $(seq 50); do [ -s "$count" ] && return; sleep 0.1; done
	die "the sink did not start"
}

without() {
	stop_proxy
	kill "$sink_pid"
	wait "$sink_pid" 2>/dev/null
}

# step RATE: "OFFERED FORWARDED" datagrams per second over STEP seconds
# (RATE 0: as fast as four sender threads go).
step() {
	local c0 c1 sent
	c0=$(cat "$count")
	sent=$(taskset -c 0 nice -n -19 "$blast" send 127.0.0.1 "$target" "$STEP" 64 4 64 "$1") ||
		die "the sender failed"
	sleep 0.3
	c1=$(cat "$count")
	echo "$((sent / STEP)) $(((c1 - c0) / STEP))"
}

kinds=(relay relay_nobudget relay_other nginx socat)
steps=$((1 + RUNS * ${#kinds[@]}))
progress 0 $steps "relay's sustainable rate"
with relay
sustainable=0 rate=20000
for _ in $(seq 16); do
	read -r offered forwarded < <(step $rate)
	awk -v o="$offered" -v f="$forwarded" 'BEGIN { exit !(f >= o * 0.97) }' || break
	[ "$forwarded" -gt "$sustainable" ] && sustainable=$forwarded
	rate=$((rate * 5 / 4))
done
without
n=1
for r in $(seq "$RUNS"); do
	for k in "${kinds[@]}"; do
		progress $((n++)) $steps "$k overloaded, run $r"
		with "$k"
		step 0 >>"$tmp/ov.$k"
		without
	done
done

mk/py bench.summary udp_overload "$out/udp_overload.json" "$sustainable" "$RUNS" "$tmp" "${kinds[@]}"
