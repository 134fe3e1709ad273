# shellcheck shell=bash
# Helpers that tests/run and tests/step share: the clock, CPU accounting and
# the one-line outcome of a test or a step. Source it.

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

# with_cpu FILE COMMAND...: run COMMAND in a subshell whose "times", once
# it is done, go to FILE: the CPU its process tree used (what it waited for).
with_cpu() {
	local file=$1; shift
	( "$@"; st=$?; times >"$file"; exit $st )
}

# cpu_of FILE: the children's user + system seconds from with_cpu's FILE
# ("0m1.250s 0m0.310s" on its second line), 0 when it is missing; removes it.
cpu_of() {
	awk 'NR == 2 { s = 0
		for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); s += p[1] * 60 + p[2] }
		printf "%.1f", s; found = 1 }
	     END { if (!found) printf "0" }' "$1" 2>/dev/null || printf 0
	rm -f "$1"
}

# outcome_line NAME STATUS SECONDS LOG [WHY]: "PASS", "SKIP" (exit 77) or
# "FAIL" with the test's or step's name and time; for a failure the end of
# its LOG (named relative to the tree's top, $top) follows.
outcome_line() {
	local name=$1 status=$2 secs=$3 log=$4 why=${5:-}
	case $status in
	0)  printf 'PASS  %-52s %7ss\n' "$name" "$secs" ;;
	77) printf 'SKIP  %-52s %7ss  %s\n' "$name" "$secs" "$why" ;;
	*)  printf 'FAIL  %-52s %7ss  (exit %s, log %s)\n' "$name" "$secs" "$status" "${log#"$top"/}"
	    tail -n 25 "$log" | sed 's/^/      | /' ;;
	esac
}
