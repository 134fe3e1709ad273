#!/usr/bin/env bash
# make soak: relay under steady load for a long time, reloaded every 30 s.
# Does it lose datagrams or messages, and do its memory and descriptors
# stay flat?
#
# One relay loop on CPU 1 (SCHED_FIFO where allowed; relay at nice 0 even
# when this runs under nice) with a udp:// and a tcp:// listener in front
# of echo upstreams (loadgen echo; the TCP echo fixture), loadgen and the
# upstreams on CPU 0, all on loopback. relay has 8 MiB socket buffers, as
# in the other benches and as a UDP relay should be deployed: the kernel's
# 208 KiB hold 15 ms of 20k datagrams/s, less than a busy host's stalls.
#   1. sustainable rate: loadgen sweep through relay, UDP then TCP; each
#      one's capacity is the highest rate that, with every lower step, kept
#      its rate and SOAK_SLO with nothing lost (loadgen(1), SWEEP), found
#      by a coarse sweep and a finer one up to the coarse step that failed.
#      The objective is on the median: the tail on a shared host measures
#      the neighbours, while a queue building up in the path moves the
#      median, and loss or a missed rate fails a step anyway;
#   2. soak: SOAK_SECONDS (default 600, after 10 s of warm-up that no row
#      covers) of UDP and TCP at once, together at 80 % of what was
#      sustained: each at 80 % of its own capacity times its share of the
#      path (SOAK_UDP_SHARE, default 0.5; TCP has the rest), so
#      u/U + t/T = 0.8. A SIGHUP in the warm-up (what a first reload
#      allocates for good is then in the baseline), then every 30 s, 15 s
#      after each row; odd reloads add a udp:// and a tcp:// listener
#      nobody uses, even ones remove them, so each opens or closes sockets.
#      A row every 30 s: relay's RSS and descriptors, its rates, drops and
#      rt_budget demotions (relay.8) since the last row, the reloads so far.
#
# Verdict (exit 1 when any fails; 2 when it could not run):
#   loss       UDP: lost <= SOAK_MAX_LOSS of sent (default 0.0001, i.e.
#              0.01 %); TCP: nothing lost; both kept their rate (within 1 %)
#   rss        median of the last third of the rows <= median of the first
#              third + max(5 %, 1 MiB)
#   fds        the same medians of the descriptors less the unused
#              listeners' (one socket each while configured): last <= first
#   reloads    every SIGHUP applied by the loop (relay_reloads_total)
# Results in results/<date>-<id>-soak/ (SOAK_RESULTS overrides results/):
# soak.json (rates, verdicts, the rows), soak.csv (the rows), table.txt,
# the sweeps' and the soak runs' loadgen JSON and time series, relay.log
# and relay's /metrics at the end (metrics-end.txt: drops by reason);
# results/latest-soak points at the newest.
#
# Knobs: SOAK_SECONDS (>= 30), SOAK_SLO (p50=5ms), SOAK_UDP_SWEEP and
# SOAK_TCP_SWEEP (coarse FROM:TO:STEPS, default 1k:150k:8 and 1k:100k:8;
# when every step meets the objective, the top one is taken: a floor),
# SOAK_STEP_S (3, each sweep step's length), SOAK_UDP_SHARE, SOAK_MAX_LOSS.
set -u
cd "$(dirname "$0")/.."
BENCH=soak
. bench/lib.sh

S=${SOAK_SECONDS:-600}
slo=${SOAK_SLO:-p50=5ms}
udp_sweep=${SOAK_UDP_SWEEP:-1k:150k:8}
tcp_sweep=${SOAK_TCP_SWEEP:-1k:100k:8}
step_s=${SOAK_STEP_S:-3}
share=${SOAK_UDP_SHARE:-0.5}
max_loss=${SOAK_MAX_LOSS:-0.0001}
case $S in ''|*[!0-9]*) die "SOAK_SECONDS '$S': a whole number of seconds" ;; esac
[ "$S" -ge 30 ] && [ "$S" -le 86400 ] || die "SOAK_SECONDS $S: from 30 to 86400"
case $step_s in ''|*[!0-9]*|0) die "SOAK_STEP_S '$step_s': whole seconds above 0" ;; esac
awk -v s="$share" -v l="$max_loss" 'BEGIN { exit !(s > 0 && s < 1 && l >= 0 && l < 1) }' ||
	die "SOAK_UDP_SHARE ($share) must be in (0, 1), SOAK_MAX_LOSS ($max_loss) in [0, 1)"
for sw in "$udp_sweep" "$tcp_sweep"; do
	[[ $sw =~ ^[0-9]+[kM]?:[0-9]+[kM]?:[0-9]+$ ]] || die "sweep '$sw': FROM:TO:STEPS (whole numbers, k or M)"
done
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (relay's loop, the load)"
loadgen=$top/build/release/bin/loadgen
[ -x "$relay" ] && [ -x "$loadgen" ] || die "build relay and loadgen first (make)"

id=$(date -u +%Y%m%d-%H%M%S)-$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')-soak
results=${SOAK_RESULTS:-$top/results}
run=$results/$id
mkdir -p "$results" && mkdir "$run" || die "cannot make $run"
echo "soak: results in $run"

# Upstreams on CPU 0.
eu=$(port udp) et=$(port tcp)
taskset -c 0 "$loadgen" echo --listen udp://127.0.0.1:$eu >"$run/echo-udp.log" 2>&1 &
pids+=($!)
taskset -c 0 python3 tests/fixtures/loadgen/tcp_echo.py "$et" "$tmp/tcp_echo.ready" \
	>"$run/echo-tcp.log" 2>&1 &
pids+=($!)

pu=$(port udp) pt=$(port tcp) xu=$(port udp) xt=$(port tcp) admin=$(port tcp)
conf=$run/relay.ini
# write_conf EXTRA: the configuration, with the unused listeners when EXTRA is 1.
write_conf() {
	{
		echo "[relay]"
		echo "listen = udp://127.0.0.1:$pu"
		echo "listen = tcp://127.0.0.1:$pt"
		if [ "$1" = 1 ]; then
			echo "listen = udp://127.0.0.1:$xu"
			echo "listen = tcp://127.0.0.1:$xt"
		fi
		echo "upstream = udp://127.0.0.1:$eu"
		echo "upstream = tcp://127.0.0.1:$et"
		echo "cpus = 1"
		echo "socket_buffer = 8388608"
		echo "admin = 127.0.0.1:$admin"
		echo "allow_non_rt = true"
	} >"$conf.tmp" && mv "$conf.tmp" "$conf"
}
write_conf 0
# relay at nice 0 whatever this script runs at (make soak under nice):
# a loop its rt_budget demotes to SCHED_OTHER (relay.8) then competes as
# it would in production, not at the caller's niceness.
nice -n $(( -$(nice) )) "$relay" --config "$conf" >"$run/relay.log" 2>&1 &
rpid=$!
pids+=($rpid)
healthy() { curl -sf -m 2 "http://127.0.0.1:$admin/healthz" >/dev/null; }
for _ in $(seq 100); do
	healthy && [ -s "$tmp/tcp_echo.ready" ] && break
	sleep 0.1
done
healthy || { cat "$run/relay.log" >&2; die "relay did not become healthy"; }
[ -s "$tmp/tcp_echo.ready" ] || die "the TCP echo upstream did not start"

# sweep PROTO PORT FROM TO STEPS NAME: prints the capacity (datagrams or
# messages per second, 0: none); the sweep's files are PROTO-NAME.* in $run.
sweep() {
	taskset -c 0 "$loadgen" sweep --target "$1://127.0.0.1:$2" --from "$3" \
		--to "$4" --steps "$5" --slo "$slo" --duration "$step_s" \
		--flows 8 --cpus 0 --repeat 1 --no-progress --json "$run/$1-$6.json" \
		--csv "$run/$1-$6.csv" >"$run/$1-$6.txt" 2>&1 ||
		{ cat "$run/$1-$6.txt" >&2; die "the $1 sweep failed"; }
	grep -E "^capacity" "$run/$1-$6.txt" | sed "s/^/soak: $1 $6: /" >&2
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["capacity"]
print(int(c["target_rate"]) if c else 0)' "$run/$1-$6.json"
}
# sustainable PROTO PORT FROM:TO:STEPS: the coarse sweep, then a finer one
# from its capacity to the next step (the first step that failed).
sustainable() {
	local from to steps c next fine
	read -r from to steps < <(awk -F: '
		function n(x) { return x ~ /k$/ ? x * 1000 : x ~ /M$/ ? x * 1e6 : x + 0 }
		{ printf "%d %d %d\n", n($1), n($2), $3 }' <<<"$3")
	[ "$steps" -ge 2 ] && [ "$to" -gt "$from" ] || die "sweep '$3': FROM < TO, 2 steps at least"
	c=$(sweep "$1" "$2" "$from" "$to" "$steps" sweep)
	if [ "$c" -gt 0 ] && [ "$c" -lt "$to" ]; then
		# Up to a fine step below the coarse one that failed.
		next=$(( c + (to - from) / (steps - 1) * 4 / 5 ))
		fine=$(sweep "$1" "$2" "$c" "$next" 5 fine)
		# The coarse capacity failing now is noise: keep the coarse one.
		[ "$fine" -gt 0 ] && c=$fine
	fi
	echo "$c"
}
# A step: its length plus the pause and the probe; a non-monotonic sweep
# repeats some of them once.
sweep_s() { local s=${1##*:}; echo $(( (s + 5) * (step_s + 1) )); }
est=$(( $(sweep_s "$udp_sweep") + $(sweep_s "$tcp_sweep") + S + 10 ))
echo "soak: about $((est / 60))m$((est % 60))s in all: two sweeps, then $S s of load"

progress 0 3 "UDP sweep $udp_sweep, then a finer one, at $slo"
cap_u=$(sustainable udp "$pu" "$udp_sweep")
progress 1 3 "TCP sweep $tcp_sweep, then a finer one, at $slo"
cap_t=$(sustainable tcp "$pt" "$tcp_sweep")
[ "$cap_u" -gt 0 ] && [ "$cap_t" -gt 0 ] ||
	die "no sustainable rate: UDP $cap_u, TCP $cap_t (see $run/*-sweep.txt)"
read -r rate_u rate_t < <(awk -v u="$cap_u" -v t="$cap_t" -v s="$share" \
	'BEGIN { printf "%d %d\n", 0.8 * s * u, 0.8 * (1 - s) * t }')
echo "soak: sustainable UDP $cap_u/s, TCP $cap_t/s; soaking at UDP $rate_u/s + TCP $rate_t/s for $S s"

# sample: "rss_kib fds rx_udp tcp_bytes drops demotions applied partial
# failed" from /proc and /metrics.
sample() {
	local rss fds
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$rpid/status" 2>/dev/null)
	fds=$(ls "/proc/$rpid/fd" 2>/dev/null | wc -l)
	curl -sf -m 5 "http://127.0.0.1:$admin/metrics" | awk -v rss="${rss:-0}" -v fds="$fds" '
		$1 == "relay_rx_packets_total" { rx = $2 }
		$1 ~ /^relay_drops_total/ { drops += $2 }
		$1 ~ /^relay_tcp_rx_bytes_total/ { tb += $2 }
		$1 == "relay_rt_demotions_total" { dm = $2 }
		$1 == "relay_reloads_total{result=\"applied\"}" { a = $2 }
		$1 == "relay_reloads_total{result=\"partial\"}" { p = $2 }
		$1 == "relay_reloads_total{result=\"failed\"}" { f = $2 }
		END { printf "%d %d %d %d %d %d %d %d %d\n", rss, fds, rx, tb, drops, dm, a, p, f }'
}

# The rows start once the load has warmed relay up (its flows, the TCP
# connections and their buffers) and end before the load does.
warm=10
echo "soak: step 3/3, soak, $S s after $warm s of warm-up, a reload every 30 s," \
	"$(( (S + warm) / 60 ))m$(( (S + warm) % 60 ))s" >&2
read -r _ _ rx0 tb0 dr0 dm0 _ _ _ < <(sample)
for proto in udp tcp; do
	if [ $proto = udp ]; then p=$pu r=$rate_u; else p=$pt r=$rate_t; fi
	taskset -c 0 "$loadgen" --target "$proto://127.0.0.1:$p" --rate "$r" \
		--duration "$((S + warm + 5))" --flows 8 --cpus 0 --no-progress \
		--json "$run/$proto-soak.json" --timeseries "$run/$proto-soak.timeseries.csv" \
		>"$run/$proto-soak.txt" 2>&1 &
	pids+=($!)
	eval "lg_$proto=\$!"
done

csv=$run/soak.csv
echo "t_s,rss_kib,fds,fds_base,udp_rx_pps,tcp_rx_bytes_ps,drops,rt_demotions,reloads_sent,reloads_applied,reloads_partial,reloads_failed" >"$csv"
# One reload in the warm-up: what the first one allocates for good (its
# thread's stack, locked) belongs in the baseline, not in the trend.
t0=$(( $(date +%s%N) + warm * 1000000000 ))
sleep $((warm / 2))
kill -HUP "$rpid"
printf '%6s %9s %5s %8s %11s %13s %6s %6s %14s\n' t_s rss_kib fds fds_base udp_rx/s \
	tcp_bytes/s drops demote reloads_ok/sent >&2
sent=1 extra=0 prev="-$warm $rx0 $tb0 $dr0 $dm0"
# Half-steps of 15 s: a row on even ones, a reload on odd ones; bounded
# by the soak's length (and each wait by 15 s).
for h in $(seq 0 $(( S / 15 ))); do
	left=$(( t0 + h * 15000000000 - $(date +%s%N) ))
	[ "$left" -gt 15000000000 ] && left=15000000000
	[ "$left" -gt 0 ] && sleep "$(printf '%d.%09d' $((left / 1000000000)) $((left % 1000000000)))"
	kill -0 "$rpid" 2>/dev/null || { cat "$run/relay.log" >&2; die "relay exited during the soak"; }
	if [ $((h % 2)) = 1 ]; then
		sent=$((sent + 1)) extra=$(( (sent - 1) % 2 ))
		write_conf "$extra"
		kill -HUP "$rpid"
		continue
	fi
	read -r rss fds rx tb drops dm ok part failed < <(sample)
	base=$((fds - 2 * extra))
	t=$((h * 15))
	# Rates and counts since the row before (since the warm-up began,
	# for the first: its 10 s).
	read -r pt_ prx ptb pdr pdm <<<"$prev"
	dt=$((t - pt_))
	urate=$(( (rx - prx) / dt )) trate=$(( (tb - ptb) / dt ))
	prev="$t $rx $tb $drops $dm"
	echo "$t,$rss,$fds,$base,$urate,$trate,$((drops - pdr)),$((dm - pdm)),$sent,$ok,$part,$failed" >>"$csv"
	printf '%6d %9d %5d %8d %11d %13d %6d %6d %8d/%d\n' "$t" "$rss" "$fds" "$base" "$urate" \
		"$trate" "$((drops - pdr))" "$((dm - pdm))" "$ok" "$sent" >&2
done
wait "$lg_udp"; rc_u=$?
wait "$lg_tcp"; rc_t=$?
healthy || echo "soak: relay is not healthy at the end" >&2
healthy_end=$(healthy && echo true || echo false)
sleep 0.5		# the last reload's line, if it is still to come
read -r _ _ _ _ _ _ ok part failed < <(sample)
curl -sf -m 5 "http://127.0.0.1:$admin/metrics" >"$run/metrics-end.txt"

python3 - "$run" "$S" "$slo" "$cap_u" "$cap_t" "$rate_u" "$rate_t" "$share" "$max_loss" \
	"$sent" "$ok" "$part" "$failed" "$rc_u" "$rc_t" "$healthy_end" <<'PY'
import csv, json, os, statistics, sys
(run, secs, slo, cap_u, cap_t, rate_u, rate_t, share, max_loss, sent, ok,
 part, failed, rc_u, rc_t, healthy) = sys.argv[1:]
secs, cap_u, cap_t, rate_u, rate_t = map(int, (secs, cap_u, cap_t, rate_u, rate_t))
sent, ok, part, failed, rc_u, rc_t = map(int, (sent, ok, part, failed, rc_u, rc_t))
share, max_loss = float(share), float(max_loss)
rows = list(csv.DictReader(open(os.path.join(run, "soak.csv"))))
for r in rows:
    for k in r:
        r[k] = int(r[k])
runs = {p: json.load(open(os.path.join(run, p + "-soak.json"))) for p in ("udp", "tcp")}

third = max(1, len(rows) // 3)
def flat(key):
    first = statistics.median(r[key] for r in rows[:third])
    last = statistics.median(r[key] for r in rows[-third:])
    return first, last

checks = []
def check(name, ok_, detail):
    checks.append({"name": name, "ok": bool(ok_), "detail": detail})

u, t = runs["udp"], runs["tcp"]
u_loss = u["lost"] / u["sent"] if u["sent"] else 1.0
check("udp loss", rc_u == 0 and u_loss <= max_loss,
      "lost %d of %d (%.4f %%), bound %.4f %%" % (u["lost"], u["sent"], 100 * u_loss,
                                                 100 * max_loss))
check("tcp loss", rc_t == 0 and t["lost"] == 0 and t["sent"] > 0,
      "lost %d of %d messages, bound 0" % (t["lost"], t["sent"]))
check("rates kept", u["rate_ok"] and t["rate_ok"],
      "UDP %.0f/s of %d, TCP %.0f/s of %d" % (u["achieved_rate"], rate_u,
                                              t["achieved_rate"], rate_t))
f, l = flat("rss_kib")
check("rss flat", l <= f + max(0.05 * f, 1024),
      "median %d KiB in the first third, %d in the last (bound +max(5 %%, 1 MiB))" % (f, l))
f, l = flat("fds_base")
check("fds flat", l <= f,
      "median %d in the first third, %d in the last (bound +0)" % (f, l))
check("reloads applied", ok == sent and part == 0 and failed == 0,
      "%d sent: %d applied, %d partial, %d failed" % (sent, ok, part, failed))
check("healthy at the end", healthy == "true", "/healthz")

verdict = "pass" if all(c["ok"] for c in checks) else "FAIL"
out = {"tool": "bench/soak.sh", "seconds": secs, "slo": slo,
       "sustainable": {"udp_pps": cap_u, "tcp_mps": cap_t},
       "load": {"fraction": 0.8, "udp_share": share, "udp_pps": rate_u, "tcp_mps": rate_t},
       "udp": {k: u[k] for k in ("sent", "received", "lost", "late", "achieved_rate",
                                 "latency_us")},
       "tcp": {k: t[k] for k in ("sent", "received", "lost", "late", "achieved_rate",
                                 "latency_us")},
       "reloads": {"sent": sent, "applied": ok, "partial": part, "failed": failed},
       "checks": checks, "verdict": verdict, "rows": rows}
json.dump(out, open(os.path.join(run, "soak.json"), "w"), indent=1)

lines = ["soak: %d s at 80 %% of the sustainable rate (SLO %s): UDP %d/s of %d, TCP %d/s of %d"
         % (secs, slo, rate_u, cap_u, rate_t, cap_t), "",
         "%6s %9s %5s %8s %11s %13s %6s %6s %9s" % (
             "t_s", "rss_kib", "fds", "fds_base", "udp_rx/s", "tcp_bytes/s", "drops",
             "demote", "reloads")]
for r in rows:
    lines.append("%6d %9d %5d %8d %11d %13d %6d %6d %9d" % (
        r["t_s"], r["rss_kib"], r["fds"], r["fds_base"], r["udp_rx_pps"],
        r["tcp_rx_bytes_ps"], r["drops"], r["rt_demotions"], r["reloads_applied"]))
lines.append("")
for p, j in (("UDP", u), ("TCP", t)):
    c = j["latency_us"]["corrected"]
    lines.append("%s: sent %d, received %d, lost %d, late %d; p50 %s us, p99 %s us, max %s us"
                 % (p, j["sent"], j["received"], j["lost"], j["late"], c.get("p50"),
                    c.get("p99"), c.get("max")))
lines.append("")
for c in checks:
    lines.append("%-20s %-4s %s" % (c["name"], "ok" if c["ok"] else "FAIL", c["detail"]))
lines.append("verdict: " + verdict)
text = "\n".join(lines) + "\n"
open(os.path.join(run, "table.txt"), "w").write(text)
print(text, end="")
sys.exit(0 if verdict == "pass" else 1)
PY
status=$?
ln -sfn "$id" "$results/latest-soak"
echo "soak: results in $run (also $results/latest-soak)"
exit $status
