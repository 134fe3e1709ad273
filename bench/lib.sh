# Shared scaffolding of the bench/*.sh scripts. Source it after setting
# BENCH to the script's name:
#   BENCH=relay_pps; . "$(dirname "$0")/lib.sh"
# It gives a temporary directory $tmp, a list $pids of background processes
# that are killed and reaped on exit, die, a free loopback port and median.

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

# median: the median of the numbers on standard input, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
