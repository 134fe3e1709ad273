#!/usr/bin/env bash
# relay against a direct path, nginx's stream UDP proxy and socat, in one
# run on loopback: the highest rate each forwards (one way, 64-byte
# datagrams, two sendmmsg sender threads) and the round-trip latency it adds
# (ping-pong through it to an echo server). The relay under test runs on
# CPU 1 (one loop; nginx one worker; socat pinned there); senders, sink and
# pinger on CPU 0. The echo server shares CPU 1 with the relay, so the
# direct and the relayed round trip cross between the CPUs equally often.
# Median of 3 runs.
#
# Targets: relay >= 2x nginx stream pps, >= 10x socat pps, < 10 us added p50.
# Prints a table, writes build/bench/relay_pps.json; exits 1 if a target is
# missed, 2 if a tool is missing or a run failed.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
out=$top/build/bench
mkdir -p "$out"
[ "$(nproc)" -ge 2 ] || { echo "relay_pps: needs 2 CPUs"; exit 2; }
for t in nginx socat cc; do
	command -v $t >/dev/null || { echo "relay_pps: $t missing (mk/deps bench)"; exit 2; }
done
relay=$top/build/release/bin/relay
[ -x "$relay" ] || { echo "relay_pps: build relay first (make)"; exit 2; }
stream_mod=/usr/lib/nginx/modules/ngx_stream_module.so
[ -f $stream_mod ] || { echo "relay_pps: $stream_mod missing (libnginx-mod-stream)"; exit 2; }

SECONDS_RUN=${RELAY_BENCH_SECONDS:-5}
RUNS=${RELAY_BENCH_RUNS:-3}
PINGS=${RELAY_BENCH_PINGS:-20000}
SIZE=64
BENCH=relay_pps
. "$(dirname "$0")/lib.sh"
blast=$out/relay_blast
cc -O2 -Wall -Wextra -Werror -pthread -o "$blast" bench/relay_blast.c ||
	{ echo "relay_pps: cannot build relay_blast"; exit 2; }

# start_proxy KIND LISTEN_PORT UPSTREAM_PORT: KIND on CPU 1; sets proxy_pid.
start_proxy() {
	local kind=$1 lp=$2 up=$3
	case $kind in
	relay)
		"$relay" --listen udp://127.0.0.1:$lp --upstream udp://127.0.0.1:$up \
			--cpus 1 --admin off --batch 64 --socket-buffer 8388608 \
			--allow-non-rt >"$tmp/relay.log" 2>&1 &
		proxy_pid=$! ;;
	nginx)
		mkdir -p "$tmp/nginx"
		cat >"$tmp/nginx/nginx.conf" <<CONF
load_module $stream_mod;
daemon off;
master_process off;
worker_processes 1;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
stream {
	server {
		listen 127.0.0.1:$lp udp reuseport;
		proxy_pass 127.0.0.1:$up;
		proxy_timeout 20s;
	}
}
CONF
		taskset -c 1 nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" \
			>"$tmp/nginx.log" 2>&1 &
		proxy_pid=$! ;;
	socat)
		taskset -c 1 socat -T 20 UDP4-LISTEN:$lp,bind=127.0.0.1,fork,reuseaddr \
			UDP4:127.0.0.1:$up >"$tmp/socat.log" 2>&1 &
		proxy_pid=$! ;;
	esac
	pids+=("$proxy_pid")
	sleep 0.5
	kill -0 "$proxy_pid" 2>/dev/null || { echo "relay_pps: $kind did not start"; cat "$tmp"/*.log; exit 2; }
}

stop_proxy() {
	kill "$proxy_pid" 2>/dev/null
	wait "$proxy_pid" 2>/dev/null
	# socat's per-peer children live on for -T seconds; end those we made.
	local c
	for c in $(pgrep -P "$proxy_pid" 2>/dev/null); do kill "$c"; done
}

# cpu1_busy: jiffies CPU 1 spent not idle (user+nice+system+irq+softirq+steal).
cpu1_busy() { awk '$1 == "cpu1" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

# pps KIND: "RATE BUSY OFFERED" - the sink's receive rate with the senders
# at full speed, the fraction of CPU 1 (where KIND runs) busy meanwhile, and
# the rate the senders offered.
pps() {
	local kind=$1 sink target
	sink=$(port)
	target=$sink
	taskset -c 0 chrt -f 10 "$blast" sink $sink $((SECONDS_RUN + 1)) 1.5 >"$tmp/sink.out" &
	local sp=$!
	if [ "$kind" = direct ]; then
		# Nothing in between; the sink itself moves to CPU 1.
		taskset -pc 1 $sp >/dev/null
	else
		target=$(port)
		start_proxy "$kind" "$target" "$sink"
	fi
	local b0 t0 b1 t1
	b0=$(cpu1_busy); t0=$(date +%s%N)
	taskset -c 0 "$blast" send 127.0.0.1 $target $SECONDS_RUN $SIZE 2 >"$tmp/sent.out"
	b1=$(cpu1_busy); t1=$(date +%s%N)
	wait $sp
	[ "$kind" = direct ] || stop_proxy
	echo "$(cat "$tmp/sink.out") $(awk -v b=$((b1 - b0)) -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.3f", b / hz / (t / 1e9) }') $(( $(cat "$tmp/sent.out") / SECONDS_RUN ))"
}

# rtt KIND: "p50 p99" round trip in us through KIND to an echo server.
rtt() {
	local kind=$1 echo_port target
	echo_port=$(port)
	taskset -c 1 "$blast" echo $echo_port 60 &
	local ep=$!
	pids+=("$ep")
	target=$echo_port
	if [ "$kind" != direct ]; then
		target=$(port)
		start_proxy "$kind" "$target" "$echo_port"
	fi
	taskset -c 0 "$blast" ping 127.0.0.1 $target $PINGS $SIZE
	local rc=$?
	[ "$kind" = direct ] || stop_proxy
	kill $ep; wait $ep 2>/dev/null
	return $rc
}

kinds=(direct relay nginx socat)
declare -A PPS BUSY OFFER P50 P99
for k in "${kinds[@]}"; do
	for r in $(seq "$RUNS"); do
		v=$(pps $k) || exit 2
		echo "$v" >>"$tmp/pps.$k"
		res=$(rtt $k) || { echo "relay_pps: ping through $k failed"; exit 2; }
		echo "$res" >>"$tmp/rtt.$k"
	done
	PPS[$k]=$(awk '{ print $1 }' "$tmp/pps.$k" | median)
	BUSY[$k]=$(awk '{ print $2 }' "$tmp/pps.$k" | median)
	OFFER[$k]=$(awk '{ print $3 }' "$tmp/pps.$k" | median)
	P50[$k]=$(awk '{ print $1 }' "$tmp/rtt.$k" | median)
	P99[$k]=$(awk '{ print $2 }' "$tmp/rtt.$k" | median)
done

python3 - "$out/relay_pps.json" "$SIZE" "$RUNS" \
	"${PPS[direct]}" "${PPS[relay]}" "${PPS[nginx]}" "${PPS[socat]}" \
	"${P50[direct]}" "${P50[relay]}" "${P50[nginx]}" "${P50[socat]}" \
	"${P99[direct]}" "${P99[relay]}" "${P99[nginx]}" "${P99[socat]}" \
	"${BUSY[direct]}" "${BUSY[relay]}" "${BUSY[nginx]}" "${BUSY[socat]}" \
	"${OFFER[direct]}" "${OFFER[relay]}" "${OFFER[nginx]}" "${OFFER[socat]}" <<'PY'
import json, sys
path, size, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
v = [float(x) for x in sys.argv[4:]]
kinds = ["direct", "relay", "nginx", "socat"]
pps = dict(zip(kinds, v[0:4])); p50 = dict(zip(kinds, v[4:8])); p99 = dict(zip(kinds, v[8:12]))
busy = dict(zip(kinds, v[12:16])); offered = dict(zip(kinds, v[16:20]))
per_core = {k: pps[k] / max(busy[k], 0.01) for k in kinds}
print("UDP one way, %d-byte datagrams, 2 sendmmsg senders; ping-pong for latency; median of %d" % (size, runs))
print("%-8s %10s %10s %9s %7s %10s %11s %11s %13s" % ("path", "offered", "pps", "vs direct",
      "cpu1 %", "pps/cpu1", "rtt p50 us", "rtt p99 us", "added p50 us"))
for k in kinds:
    print("%-8s %10.0f %10.0f %9.2f %7.0f %10.0f %11.1f %11.1f %13s" % (k, offered[k], pps[k],
          pps[k] / pps["direct"], busy[k] * 100, per_core[k], p50[k], p99[k],
          "-" if k == "direct" else "%.1f" % (p50[k] - p50["direct"])))
print("(cpu1 %: how busy the CPU the relay runs on was; pps/cpu1: the rate per fully used core,")
print(" the ceiling when the senders, not the relay, are the limit)")
r_nginx = pps["relay"] / pps["nginx"]; r_socat = pps["relay"] / pps["socat"]
added = p50["relay"] - p50["direct"]
checks = [("relay pps / nginx stream pps", r_nginx, ">= 2", r_nginx >= 2),
          ("relay pps / socat pps", r_socat, ">= 10", r_socat >= 10),
          ("relay added p50 (us)", added, "< 10", added < 10)]
for name, val, want, ok in checks:
    print("%-30s %8.2f  target %-5s %s" % (name, val, want, "met" if ok else "MISSED"))
print("per core: relay/nginx %.2f, relay/socat %.2f" % (per_core["relay"] / per_core["nginx"],
      per_core["relay"] / per_core["socat"]))
json.dump({"bench": "relay_pps", "size": size, "runs": runs, "pps": pps,
           "offered_pps": offered, "cpu1_busy": busy, "pps_per_cpu1": per_core,
           "rtt_p50_us": p50, "rtt_p99_us": p99,
           "ratios": {"relay_vs_nginx": r_nginx, "relay_vs_socat": r_socat,
                      "relay_vs_direct": pps["relay"] / pps["direct"]},
           "added_p50_us": {k: p50[k] - p50["direct"] for k in kinds if k != "direct"},
           "targets_met": all(c[3] for c in checks)}, open(path, "w"), indent=2)
sys.exit(0 if all(c[3] for c in checks) else 1)
PY
