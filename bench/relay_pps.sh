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

python3 - "$out/relay_pps.json" "$SIZE" "$RUNS" "$tmp" <<'PY'
import json, statistics, sys
path, size, runs, tmp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
kinds = ["direct", "relay", "relay-nobudget", "nginx", "socat"]
traffics = ["datagram", "segmented"]

def medians(name):
    rows = [[float(x) for x in line.split()] for line in open("%s/%s" % (tmp, name))]
    return [statistics.median(col) for col in zip(*rows)]

rtt = {k: medians("rtt." + k) for k in kinds}
p50 = {k: rtt[k][0] for k in kinds}
p99 = {k: rtt[k][1] for k in kinds}
res = {}
checks = []
for t in traffics:
    m = {k: medians("pps.%s.%s" % (t, k)) for k in kinds}
    r = {"pps": {k: m[k][0] for k in kinds},
         "cpu1_busy": {k: m[k][1] for k in kinds if k != "direct"},
         "offered_pps": {k: m[k][2] for k in kinds}}
    r["pps_per_cpu1"] = {k: r["pps"][k] / max(r["cpu1_busy"][k], 0.01) for k in kinds
                         if k != "direct"}
    r["ratios"] = {"relay_vs_nginx": r["pps"]["relay"] / r["pps"]["nginx"],
                   "relay_vs_socat": r["pps"]["relay"] / r["pps"]["socat"],
                   "relay_vs_direct": r["pps"]["relay"] / r["pps"]["direct"],
                   "relay_vs_relay_nobudget": r["pps"]["relay"] / r["pps"]["relay-nobudget"]}
    res[t] = r
    checks += [("%s: relay pps / nginx pps" % t, r["ratios"]["relay_vs_nginx"], ">= 2",
                r["ratios"]["relay_vs_nginx"] >= 2),
               ("%s: relay pps / socat pps" % t, r["ratios"]["relay_vs_socat"], ">= 10",
                r["ratios"]["relay_vs_socat"] >= 10),
               ("%s: relay / without budget" % t, r["ratios"]["relay_vs_relay_nobudget"],
                ">= 0.95", r["ratios"]["relay_vs_relay_nobudget"] >= 0.95)]
added = p50["relay"] - p50["direct"]
checks.append(("relay added p50 (us)", added, "< 10", added < 10))

print("UDP one way, %d-byte datagrams, 2 sendmmsg senders, median of %d" % (size, runs))
print("%-10s %-14s %11s %11s %9s %7s %11s" % ("traffic", "path", "offered", "pps",
      "vs direct", "cpu1 %", "pps/cpu1"))
for t in traffics:
    r = res[t]
    for k in kinds:
        # The direct path has no forwarder on CPU 1 to be busy.
        busy = "-" if k == "direct" else "%.0f" % (r["cpu1_busy"][k] * 100)
        per_core = "-" if k == "direct" else "%.0f" % r["pps_per_cpu1"][k]
        print("%-10s %-14s %11.0f %11.0f %9.2f %7s %11s" % (t, k, r["offered_pps"][k],
              r["pps"][k], r["pps"][k] / r["pps"]["direct"], busy, per_core))
print("(cpu1 %: how busy the CPU the forwarder runs on was; pps/cpu1: the rate per fully")
print(" used core, the ceiling when the senders, not the forwarder, are the limit;")
print(" datagram: one datagram per write and read; segmented: runs of 64 (UDP_SEGMENT")
print(" senders, UDP_GRO sink), relay --udp-gro keeps them, nginx and socat split them)")
print()
print("ping-pong through each, one datagram at a time")
print("%-14s %11s %11s %13s" % ("path", "rtt p50 us", "rtt p99 us", "added p50 us"))
for k in kinds:
    print("%-14s %11.1f %11.1f %13s" % (k, p50[k], p99[k],
          "-" if k == "direct" else "%.1f" % (p50[k] - p50["direct"])))
print()
for name, val, want, ok in checks:
    print("%-34s %10.2f  target %-5s %s" % (name, val, want, "met" if ok else "MISSED"))
json.dump({"bench": "relay_pps", "size": size, "runs": runs, "traffic": res,
           "rtt_p50_us": p50, "rtt_p99_us": p99,
           "added_p50_us": {k: p50[k] - p50["direct"] for k in kinds if k != "direct"},
           "checks": [{"name": c[0], "value": c[1], "target": c[2], "met": c[3]} for c in checks],
           "targets_met": all(c[3] for c in checks)}, open(path, "w"), indent=2)
sys.exit(0 if all(c[3] for c in checks) else 1)
PY
