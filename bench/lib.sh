# shellcheck shell=bash
# Shared scaffolding of the bench/*.sh scripts. Source it from the top of
# the tree after setting BENCH to the script's name:
#   BENCH=relay_pps; . "$(dirname "$0")/lib.sh"
# It gives a temporary directory $tmp, a list $pids of background processes
# that are killed and reaped on exit, die, a free loopback port, median
# and a progress line; the UDP forwarders under test (start_proxy).

tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

die() { echo "$BENCH: $*" >&2; exit 2; }

top=$(pwd)
out=$top/build/bench
mkdir -p "$out"
relay=$top/build/release/bin/relay
stream_mod=/usr/lib/nginx/modules/ngx_stream_module.so

# udp_bench_needs TOOL...: two CPUs, each TOOL, relay built, nginx's stream
# module, and relay_blast built as $blast; or die.
udp_bench_needs() {
	[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs"
	local t
	for t in "$@" cc; do
		command -v "$t" >/dev/null || die "$t missing (mk/deps bench)"
	done
	[ -x "$relay" ] || die "build relay first (make)"
	[ -f $stream_mod ] || die "$stream_mod missing (libnginx-mod-stream)"
	blast=$out/relay_blast
	cc -O2 -Wall -Wextra -Werror -pthread -o "$blast" bench/relay_blast.c ||
		die "cannot build relay_blast"
}

# port [udp|tcp]: a loopback port nothing is bound to now, and none given
# before in this run (default udp).
port() { mk/py tests.pylib.ports free "${1:-udp}" "$tmp/ports"; }

# progress DONE TOTAL WHAT: on standard error, the step about to run and
# the time left at the pace of the steps so far.
bench_start=$SECONDS
progress() {
	local done=$1 total=$2 left=""
	if [ "$done" -gt 0 ]; then
		left=$(( (SECONDS - bench_start) * (total - done) / done ))
		left=", about $((left / 60))m$((left % 60))s left"
	fi
	echo "$BENCH: step $((done + 1))/$total, $3$left" >&2
}

# median: the median of the numbers on standard input, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# start_proxy KIND LISTEN_PORT UPSTREAM_PORT [RELAY_FLAGS...]: a UDP
# forwarder (relay, nginx or socat) on CPU 1, prefixed by $proxy_wrap
# (e.g. nice) when set; sets proxy_pid. Needs $relay and $stream_mod.
start_proxy() {
	local kind=$1 lp=$2 up=$3
	shift 3
	case $kind in
	relay|relay-nobudget)
		# relay-nobudget: the same without its rt_budget, for the
		# budget's cost where relay has its CPU to itself
		[ "$kind" = relay ] || set -- --rt-budget 100 "$@"
		${proxy_wrap:-} "$relay" --listen "udp://127.0.0.1:$lp" --upstream "udp://127.0.0.1:$up" \
			--cpus 1 --admin off --batch 64 --socket-buffer 8388608 \
			--allow-non-rt "$@" >"$tmp/relay.log" 2>&1 &
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
		# shellcheck disable=SC2086 # proxy_wrap is a command prefix: its words
		taskset -c 1 ${proxy_wrap:-} nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" \
			>"$tmp/nginx.log" 2>&1 &
		proxy_pid=$! ;;
	socat)
		# shellcheck disable=SC2086 # proxy_wrap, as above
		taskset -c 1 ${proxy_wrap:-} socat -T 20 "UDP4-LISTEN:$lp,bind=127.0.0.1,fork,reuseaddr" \
			"UDP4:127.0.0.1:$up" >"$tmp/socat.log" 2>&1 &
		proxy_pid=$! ;;
	esac
	pids+=("$proxy_pid")
	sleep 0.5
	kill -0 "$proxy_pid" 2>/dev/null || { cat "$tmp"/*.log; die "$kind did not start"; }
}

stop_proxy() {
	kill "$proxy_pid" 2>/dev/null
	wait "$proxy_pid" 2>/dev/null
	# socat's per-peer children live on for -T seconds; end those we made.
	local c
	for c in $(pgrep -P "$proxy_pid" 2>/dev/null); do kill "$c"; done
}
