#!/usr/bin/env bash
# relay's TCP path against haproxy (mode tcp) and nginx stream, in one run
# on the same loopback path: wrk -t1 -c50 (CPU 0) through each relay (CPU 1,
# one worker/thread/loop) to one nginx HTTP upstream (CPU 0), for plain TCP
# and for TLS terminated by the relay (TLS 1.3, ECDSA P-256, keep-alive),
# plus wrk straight to the upstream as the baseline. relay's loop runs
# SCHED_FIFO 50; haproxy and nginx get the same (chrt) where allowed, so
# the scheduler favours none of them. Median of RUNS runs, the peers
# interleaved within each run.
# Also each relay's CPU time per request (all its threads and processes),
# the figure least disturbed by other load on the machine, and how busy
# CPU 0 was: on two CPUs wrk and the upstream together saturate CPU 0
# before any of the relays saturates CPU 1, so every relay reaches the same
# rate within noise and that rate ranks the client, not the relays. What one
# core carries through each relay is then 1e6 / its CPU us per request.
# Targets, for plain and for TLS: relay's requests per second on one core
# at least haproxy's (measured rate when a relay is the limit, the per-core
# rate from its CPU time per request when the client is), and relay's
# added p99 latency (p99 through it minus p99 direct) at most haproxy's.
# Prints a table and the ratios, writes build/bench/tcp_relay.json; exits 1
# if a target is missed, 2 if a tool is missing or a run failed.
set -u
cd "$(dirname "$0")/.."
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
RUNS=${TCP_BENCH_RUNS:-5}
CONNS=${TCP_BENCH_CONNS:-50}
BENCH=tcp_relay
. "$(dirname "$0")/lib.sh"

wait_port() {
	local i
	for i in $(seq 100); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" 2>/dev/null && return 0
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
taskset -c 0 nginx -p "$tmp/up" -c "$tmp/up/nginx.conf" -e "$tmp/up/error.log" &
pids+=($!)

# The peers' scheduling class: relay's (SCHED_FIFO 50) when we may.
fifo=(chrt -f 50)
"${fifo[@]}" true 2>/dev/null || fifo=()
sched=${fifo[*]:-SCHED_OTHER (no permission for SCHED_FIFO)}

declare -A P
for peer in relay haproxy nginx; do
	P[$peer.plain]=$(port tcp)
	P[$peer.tls]=$(port tcp)
done

taskset -c 1 "$relay" --cpus 1 --allow-non-rt --admin 127.0.0.1:0 \
	--listen "tcp://127.0.0.1:${P[relay.plain]}" \
	--listen "tls://127.0.0.1:${P[relay.tls]}" --cert "$cert" --key "$key" \
	--upstream "tcp://127.0.0.1:$up" --max-conns 1000 >"$tmp/relay.log" 2>&1 &
pids+=($!)
declare -A PID
PID[relay]=$!

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
PID[haproxy]=$!

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
PID[nginx]=$!

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

# CPU ticks used so far by PEER's process and its children (nginx workers).
cpu_ticks() {
	local p procs=${PID[$1]} sum=0
	procs+=" $(pgrep -P "${PID[$1]}" | tr '\n' ' ')"
	for p in $procs; do
		sum=$((sum + $(cat /proc/"$p"/task/*/stat 2>/dev/null |
			awk '{ s += $14 + $15 } END { print s + 0 }')))
	done
	echo $sum
}

url() {	# url PEER MODE
	local scheme=http
	[ "$2" = tls ] && scheme=https
	if [ "$1" = direct ]; then echo "http://127.0.0.1:$up/"; else echo "$scheme://127.0.0.1:${P[$1.$2]}/"; fi
}

# cpu0_busy: jiffies CPU 0 spent not idle.
cpu0_busy() { awk '$1 == "cpu0" { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }

hz=$(getconf CLK_TCK)
declare -A RPS P99 CPU BUSY0
step=0
for run in $(seq "$RUNS"); do
	for mode in plain tls; do
		for peer in direct relay haproxy nginx; do
			progress $((step++)) $((RUNS * 8)) "$peer, $mode, run $run"
			[ $peer = direct ] || c0=$(cpu_ticks $peer)
			b0=$(cpu0_busy)
			r=$(wrk_run "$(url $peer $mode)") || die "wrk through $peer ($mode) failed"
			BUSY0[$mode.$peer]+="$(awk -v b=$(( $(cpu0_busy) - b0 )) -v hz="$hz" -v s="$S" \
				'BEGIN { printf "%.0f", b / hz / s * 100 }') "
			RPS[$mode.$peer]+="${r% *} "
			P99[$mode.$peer]+="${r#* } "
			[ $peer = direct ] && continue
			CPU[$mode.$peer]+="$(awk -v t=$(( $(cpu_ticks $peer) - c0 )) -v hz="$hz" \
				-v n="${r% *}" -v s="$S" 'BEGIN { printf "%.2f", t / hz * 1e6 / (n * s) }') "
		done
	done
done

echo "wrk -t1 -c$CONNS -d${S}s on CPU 0; relays on CPU 1 (peers: $sched); median of $RUNS"
status=0
json="{\"seconds\": $S, \"runs\": $RUNS, \"connections\": $CONNS"
printf '%-6s %-8s %10s %7s %10s %14s %12s %10s\n' mode peer rps cpu0_% p99_us added_p99_us \
	cpu_us_req rps/core
for mode in plain tls; do
	d99=$(tr " " "\n" <<<"${P99[$mode.direct]}" | grep . | median)
	json+=", \"$mode\": {"
	sep=""
	for peer in direct relay haproxy nginx; do
		rps=$(tr " " "\n" <<<"${RPS[$mode.$peer]}" | grep . | median)
		p99=$(tr " " "\n" <<<"${P99[$mode.$peer]}" | grep . | median)
		busy0=$(tr " " "\n" <<<"${BUSY0[$mode.$peer]}" | grep . | median)
		added=$((p99 - d99))
		cpu=- core=-
		if [ $peer != direct ]; then
			cpu=$(tr " " "\n" <<<"${CPU[$mode.$peer]}" | grep . | median)
			core=$(awk -v c="$cpu" 'BEGIN { printf "%.0f", 1e6 / c }')
		fi
		declare "R_$peer=$rps" "A_$peer=$added" "C_$peer=$cpu" "K_$peer=$core" "B_$peer=$busy0"
		printf '%-6s %-8s %10s %7s %10s %14s %12s %10s\n' "$mode" "$peer" "$rps" "$busy0" \
			"$p99" "$added" "$cpu" "$core"
		json+="$sep\"$peer\": {\"rps\": $rps, \"cpu0_busy_pct\": $busy0, \"p99_us\": $p99, \"added_p99_us\": $added"
		[ $peer = direct ] || json+=", \"cpu_us_per_request\": $cpu, \"rps_per_core\": $core"
		json+="}"
		sep=", "
	done
	rr=$(awk -v a="$R_relay" -v b="$R_haproxy" 'BEGIN { printf "%.3f", a / b }')
	rn=$(awk -v a="$R_relay" -v b="$R_nginx" 'BEGIN { printf "%.3f", a / b }')
	kr=$(awk -v a="$K_relay" -v b="$K_haproxy" 'BEGIN { printf "%.3f", a / b }')
	kn=$(awk -v a="$K_relay" -v b="$K_nginx" 'BEGIN { printf "%.3f", a / b }')
	# Which CPU was the limit: the client's when CPU 0 was saturated in
	# both the relay's and haproxy's runs.
	client_bound=$(awk -v a="$B_relay" -v b="$B_haproxy" 'BEGIN { print (a >= 95 && b >= 95) ? 1 : 0 }')
	if [ "$client_bound" = 1 ]; then
		basis="per core (CPU 0 saturated: the client was the limit)"
		ratio=$kr
	else
		basis="measured (CPU 0 not saturated: the relays were the limit)"
		ratio=$rr
	fi
	# Added latency can be at or under zero; compare the values themselves.
	ar=$(awk -v a="$A_relay" -v b="$A_haproxy" 'BEGIN { r = b > 0 ? a / b : (a <= b ? 0 : 99); printf "%.2f", r }')
	echo "$mode: relay/haproxy rps measured ${rr}x, per core ${kr}x; relay/nginx ${rn}x, ${kn}x"
	echo "$mode: requests per second on one core, $basis: relay/haproxy ${ratio}x (target >= 1)"
	echo "$mode: added p99 relay ${A_relay} us vs haproxy ${A_haproxy} us (ratio $ar, target <= 1), nginx ${A_nginx} us"
	json+=", \"rps_ratio_haproxy\": $rr, \"rps_ratio_nginx\": $rn"
	json+=", \"rps_per_core_ratio_haproxy\": $kr, \"rps_per_core_ratio_nginx\": $kn"
	json+=", \"client_bound\": $([ "$client_bound" = 1 ] && echo true || echo false)"
	json+=", \"added_p99_ratio_haproxy\": $ar}"
	awk -v r="$ratio" 'BEGIN { exit !(r >= 1) }' ||
		{ echo "$mode: MISSED: relay carries fewer requests per core than haproxy"; status=1; }
	[ "$A_relay" -le "$A_haproxy" ] || { echo "$mode: MISSED: relay adds more p99 than haproxy"; status=1; }
done
echo "$json}" >"$out/tcp_relay.json"
exit $status
