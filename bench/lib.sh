# Shared scaffolding of the bench/*.sh scripts. Source it after setting
# BENCH to the script's name:
#   BENCH=relay_pps; . "$(dirname "$0")/lib.sh"
# It gives a temporary directory $tmp, a list $pids of background processes
# that are killed and reaped on exit, die, a free loopback port, median
# and a progress line.

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

# port [udp|tcp]: a loopback port nothing is bound to now (default udp).
port() {
	python3 - "${1:-udp}" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1] == "tcp" else socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
PY
}

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
