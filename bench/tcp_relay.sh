#!/usr/bin/env bash
# relay's TCP path against haproxy (mode tcp) and nginx stream, in one run
# on the same loopback path: wrk -t1 -c50 (CPU 0) through each relay (CPU 1,
# one worker/thread/loop) to one nginx HTTP upstream (CPU 0), for plain TCP
# and for TLS terminated by the relay (TLS 1.3, ECDSA P-256, keep-alive),
# plus wrk straight to the upstream as the baseline. relay's loop runs
# SCHED_FIFO 50; haproxy and nginx get the same (chrt) where allowed, so
# the scheduler favours none of them. RUNS runs, the peers interleaved
# within each run.
# relay runs twice: as it comes (TCP latency from the kernel receive time,
# which has the kernel stamp every packet on the host, the client's too)
# and as relay_rd, with --tcp-kernel-stamps no (latency from its reads),
# the set-up comparable with peers that take no kernel timestamps.
# Also how busy each CPU was. CPU 1 runs only the relay under test, so its
# busy time per request (the relay's threads, and the kernel work its
# sends cause there: softirq included) is the relay's cost, the figure
# least disturbed by other load on the machine. On two CPUs wrk and the
# upstream together saturate CPU 0 before any relay saturates CPU 1, so
# every relay reaches the same rate within noise and that rate ranks the
# client, not the relays; what one core carries through a relay is then
# 1e6 / its CPU 1 us per request.
# Targets, for plain and for TLS, relay_rd against haproxy: requests per
# second on one core at least haproxy's (measured when a relay is the
# limit, per core when the client is), and added p99 latency (p99 through
# it minus p99 direct) at most haproxy's. Each ratio is the median over
# the runs of the ratio within a run, so slow drift of the machine's
# speed cancels; the table shows the medians of the values themselves.
# Prints a table and the ratios, writes build/bench/tcp_relay.json; exits 1
# if a target is missed, 2 if a tool is missing or a run failed.
#
# tcp_relay.sh shared: the layout of a CPU shared with the upstream (what
# bench/tcp_shared.sh runs): the upstream nginx moves to CPU 1 with the
# relays, every peer runs SCHED_OTHER, and relay_rd becomes relay_other
# (--sched other, --tcp-kernel-stamps no), the set-up relay(8) recommends
# there; relay as it comes stays SCHED_FIFO. CPU 1 busy per request then
# counts the upstream's work too, the same for every peer. Writes
# build/bench/tcp_shared.json.
set -u
layout=${1:-dedicated}
case $layout in
dedicated) up_cpu=0 mine=relay_rd mine_flags=(--tcp-kernel-stamps no) name=tcp_relay ;;
shared)    up_cpu=1 mine=relay_other mine_flags=(--tcp-kernel-stamps no --sched other) name=tcp_shared ;;
*) echo "usage: bench/tcp_relay.sh [dedicated|shared]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.." || exit 2
top=$(pwd)
out=$top/build/bench
mkdir -p "$out"
[ "$(nproc)" -ge 2 ] || { echo "tcp_relay: needs 2 CPUs"; exit 2; }
for t in wrk nginx haproxy openssl taskset chrt; do
	command -v "$t" >/dev/null || { echo "tcp_relay: $t missing (mk/deps bench tcp)"; exit 2; }
done
stream_mod=/usr/lib/nginx/modules/ngx_stream_module.so
[ -f "$stream_mod" ] || { echo "tcp_relay: nginx stream module missing (libnginx-mod-stream)"; exit 2; }
relay=$top/build/release/bin/relay
[ -x "$relay" ] || { echo "tcp_relay: build relay first (make)"; exit 2; }

S=${TCP_BENCH_SECONDS:-3}
RUNS=${TCP_BENCH_RUNS:-7}
CONNS=${TCP_BENCH_CONNS:-50}
BENCH=$name
. "$(dirname "$0")/lib.sh"

# wait_port PORT: something accepts TCP connections on 127.0.0.1:PORT
# (100 tries 0.1 s apart, each a connection by bash's /dev/tcp given 1 s).
wait_port() {
	for _ in $(seq 100); do
		timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

"$top/tests/fixtures/tls/make-certs.sh" "$tmp/certs" || die "cannot make certificates"
cert=$tmp/certs/server.pem
key=$tmp/certs/server.key
cat "$cert" "$key" >"$tmp/certs/combined.pem"
up=$(port tcp)
mkdir -p "$tmp/up" "$tmp/ngx"

cat >"$tmp/up/nginx.conf" <<CONF
user root;
worker_processes 1;
daemon off;
pid $tmp/up/nginx.pid;
error_log $tmp/up/error.log;
events { worker_connections 4096; }
http {
	access_log off;
	keepalive_requests 100000000;
	client_body_temp_path $tmp/up;
	proxy_temp_path $tmp/up;
	fastcgi_temp_path $tmp/up;
	uwsgi_temp_path $tmp/up;
	scgi_temp_path $tmp/up;
	server { listen 127.0.0.1:$up; location / { return 200 "ok\n"; } }
}
CONF
taskset -c $up_cpu nginx -p "$tmp/up" -c "$tmp/up/nginx.conf" -e "$tmp/up/error.log" &
pids+=($!)

# The peers' scheduling class: relay's (SCHED_FIFO 50) when we may.
fifo=(chrt -f 50)
"${fifo[@]}" true 2>/dev/null || fifo=()
sched=${fifo[*]:-SCHED_OTHER (no permission for SCHED_FIFO)}
if [ "$layout" = shared ]; then
	fifo=() sched="SCHED_OTHER, sharing CPU 1 with the upstream"
fi

declare -A P
for peer in relay $mine haproxy nginx; do
	P[$peer.plain]=$(port tcp)
	P[$peer.tls]=$(port tcp)
done

for peer in relay $mine; do
	flags=()
	[ "$peer" = $mine ] && flags=("${mine_flags[@]}")
	taskset -c 1 "$relay" --cpus 1 --allow-non-rt --admin 127.0.0.1:0 \
		--listen "tcp://127.0.0.1:${P[$peer.plain]}" \
		--listen "tls://127.0.0.1:${P[$peer.tls]}" --cert "$cert" --key "$key" \
		--upstream "tcp://127.0.0.1:$up" --max-conns 1000 \
		"${flags[@]}" >"$tmp/$peer.log" 2>&1 &
	pids+=($!)
done

cat >"$tmp/haproxy.cfg" <<CONF
global
	nbthread 1
	maxconn 1000
	ssl-default-bind-options ssl-min-ver TLSv1.2
defaults
	mode tcp
	timeout connect 5s
	timeout client 60s
	timeout server 60s
frontend plain
	bind 127.0.0.1:${P[haproxy.plain]}
	default_backend up
frontend tls
	bind 127.0.0.1:${P[haproxy.tls]} ssl crt $tmp/certs/combined.pem
	default_backend up
backend up
	server s1 127.0.0.1:$up
CONF
taskset -c 1 "${fifo[@]}" haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
pids+=($!)

cat >"$tmp/ngx/nginx.conf" <<CONF
load_module $stream_mod;
user root;
worker_processes 1;
daemon off;
pid $tmp/ngx/nginx.pid;
error_log $tmp/ngx/error.log;
events { worker_connections 4096; }
stream {
	server { listen 127.0.0.1:${P[nginx.plain]}; proxy_pass 127.0.0.1:$up; }
	server {
		listen 127.0.0.1:${P[nginx.tls]} ssl;
		ssl_certificate $cert;
		ssl_certificate_key $key;
		ssl_protocols TLSv1.2 TLSv1.3;
		proxy_pass 127.0.0.1:$up;
	}
}
CONF
taskset -c 1 "${fifo[@]}" nginx -p "$tmp/ngx" -c "$tmp/ngx/nginx.conf" -e "$tmp/ngx/error.log" &
pids+=($!)

wait_port "$up" || die "upstream nginx did not start"
for k in "${!P[@]}"; do
	wait_port "${P[$k]}" || { cat "$tmp"/*.log 2>/dev/null; die "$k did not start"; }
done

# wrk_run URL -> "RPS P99_US" (fails on socket errors or non-2xx)
wrk_run() {
	local o
	o=$(taskset -c 0 wrk -t1 -c"$CONNS" -d"${S}s" --latency "$1" 2>&1) || { echo "$o" >&2; return 1; }
	if grep -q 'Socket errors\|Non-2xx' <<<"$o"; then
		echo "$o" >&2
		return 1
	fi
	awk '/Requests\/sec/ { rps = $2 }
	     $1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
	                   f = u == "s" ? 1e6 : u == "ms" ? 1e3 : 1; p99 = v * f }
	     END { printf "%.0f %.0f\n", rps, p99 }' <<<"$o"
}

url() {	# url PEER MODE
	local scheme=http
	[ "$2" = tls ] && scheme=https
	if [ "$1" = direct ]; then echo "http://127.0.0.1:$up/"; else echo "$scheme://127.0.0.1:${P[$1.$2]}/"; fi
}

# busy CPU: jiffies CPU $1 spent not idle (user, nice, system, irq, softirq).
busy() { awk -v c="cpu$1" '$1 == c { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }

# pct JIFFIES NS: that share of one CPU over NS nanoseconds.
pct() { awk -v b="$1" -v hz="$hz" -v ns="$2" 'BEGIN { printf "%.0f", b / hz / ns * 1e11 }'; }

# Per run and peer: V[$mode.$peer.$run] for V in RPS P99 B0 B1 (busy %)
# and US (CPU 1 us per request).
hz=$(getconf CLK_TCK)
peers="direct relay $mine haproxy nginx"
declare -A RPS P99 B0 B1 US
step=0
# shellcheck disable=SC2034 # med reads RPS, P99, B0, B1 and US by name
for run in $(seq "$RUNS"); do
	for mode in plain tls; do
		for peer in $peers; do
			progress $((step++)) $((RUNS * 10)) "$peer, $mode, run $run"
			k=$mode.$peer.$run
			a0=$(busy 0) a1=$(busy 1) t0=$(date +%s%N)
			r=$(wrk_run "$(url "$peer" $mode)") || die "wrk through $peer ($mode) failed"
			b0=$(( $(busy 0) - a0 )) b1=$(( $(busy 1) - a1 )) ns=$(( $(date +%s%N) - t0 ))
			RPS[$k]=${r% *} P99[$k]=${r#* } B0[$k]=$(pct $b0 $ns) B1[$k]=$(pct $b1 $ns)
			US[$k]=$(awk -v b=$b1 -v hz="$hz" -v n="${r% *}" -v s="$S" \
				'BEGIN { printf "%.2f", b / hz * 1e6 / (n * s) }')
		done
	done
done

# med ARRAY MODE PEER [EXPR]: the median over the runs of ARRAY's value, or
# of an awk expression of it (v), of the direct run's (d) and haproxy's (h).
med() {
	local -n arr=$1
	local run expr=${4:-v}
	for run in $(seq "$RUNS"); do
		awk -v v="${arr[$2.$3.$run]}" -v d="${arr[$2.direct.$run]}" \
			-v h="${arr[$2.haproxy.$run]}" "BEGIN { printf \"%.3f\\n\", ($expr) }"
	done | median
}

echo "wrk -t1 -c$CONNS -d${S}s on CPU 0; relays on CPU 1 (peers: $sched); upstream on CPU $up_cpu; $RUNS runs"
echo "relay: as it comes (SCHED_FIFO, TCP latency from kernel receive stamps); $mine: ${mine_flags[*]}"
status=0
json="{\"seconds\": $S, \"runs\": $RUNS, \"connections\": $CONNS"
printf '%-6s %-9s %9s %7s %7s %8s %10s %11s %9s\n' mode peer rps cpu0_% cpu1_% p99_us \
	added_p99 cpu1_us_req rps/core
for mode in plain tls; do
	json+=", \"$mode\": {"
	sep=""
	for peer in $peers; do
		rps=$(med RPS $mode "$peer") p99=$(med P99 $mode "$peer")
		added=$(med P99 $mode "$peer" "v - d")
		b0=$(med B0 $mode "$peer") b1=$(med B1 $mode "$peer")
		printf '%-6s %-9s %9.0f %7.0f %7.0f %8.0f %10.0f' "$mode" "$peer" "$rps" "$b0" "$b1" "$p99" "$added"
		json+="$sep\"$peer\": {\"rps\": $rps, \"cpu0_busy_pct\": $b0, \"p99_us\": $p99, \"added_p99_us\": $added"
		sep=", "
		if [ "$peer" = direct ]; then
			echo
			json+="}"
			continue
		fi
		us=$(med US $mode "$peer")
		core=$(awk -v c="$us" 'BEGIN { printf "%.0f", 1e6 / c }')
		printf ' %11.2f %9s\n' "$us" "$core"
		json+=", \"cpu1_busy_pct\": $b1, \"cpu1_us_per_request\": $us, \"rps_per_core\": $core"
		if [ "$peer" = relay ] || [ "$peer" = $mine ]; then
			declare "RR_$peer=$(med RPS $mode "$peer" "v / h")"
			declare "KR_$peer=$(med US $mode "$peer" "h / v")"
			declare "PD_$peer=$(med P99 $mode "$peer" "v - h")"
			declare "AR_$peer=$(med P99 $mode "$peer" "h > d ? (v - d) / (h - d) : 99")"
		fi
		json+="}"
	done
	# Which CPU was the limit: the client's when CPU 0 was saturated in
	# haproxy's runs and in $mine's.
	client_bound=$(awk -v a="$(med B0 $mode $mine)" -v b="$(med B0 $mode haproxy)" \
		'BEGIN { print (a >= 95 && b >= 95) ? 1 : 0 }')
	for peer in relay $mine; do
		rr=RR_$peer kr=KR_$peer pd=PD_$peer ar=AR_$peer
		printf '%s: %s/haproxy rps measured %sx, per core %sx; p99 %+.0f us against haproxy (added p99 ratio %s)\n' \
			"$mode" "$peer" "${!rr}" "${!kr}" "${!pd}" "${!ar}"
		json+=", \"${peer}_vs_haproxy\": {\"rps_ratio\": ${!rr}, \"rps_per_core_ratio\": ${!kr}"
		json+=", \"p99_difference_us\": ${!pd}, \"added_p99_ratio\": ${!ar}}"
	done
	if [ "$client_bound" = 1 ]; then
		basis="per core (CPU 0 saturated: the client was the limit)"
		kr=KR_$mine ratio=${!kr}
	else
		basis="measured (CPU 0 not saturated: the relays were the limit)"
		rr=RR_$mine ratio=${!rr}
	fi
	pd=PD_$mine ar=AR_$mine
	json+=", \"client_bound\": $([ "$client_bound" = 1 ] && echo true || echo false)}"
	echo "$mode: requests per second on one core, $basis: $mine/haproxy ${ratio}x (target >= 1)"
	printf '%s: p99 %s minus haproxy %+.0f us, added p99 ratio %s (target <= 0 us, <= 1)\n' \
		"$mode" "$mine" "${!pd}" "${!ar}"
	awk -v r="$ratio" 'BEGIN { exit !(r >= 1) }' ||
		{ echo "$mode: MISSED: relay carries fewer requests per core than haproxy"; status=1; }
	awk -v d="${!pd}" 'BEGIN { exit !(d <= 0) }' ||
		{ echo "$mode: MISSED: relay adds more p99 than haproxy"; status=1; }
done
echo "$json}" >"$out/$name.json"
exit $status
