#!/usr/bin/env bash
# Each experiment's tests live in its own folder, lab/<experiment>/tests/
# (tests/run schedules the shell tests found there): a test under
# tests/integration/ or tests/vm/, or a helper of tests/pylib/, that names
# one experiment and no other fails here, saying where it belongs. The
# experiments are the folders of lab/README.md's table; a file names one
# by its path, its Python modules, or a program built from its folder
# (the "call program" lines of lab's mk files: the scenario runner is the
# demo's); one that names the pages' shared dispatch (lab.results, which
# report/render and report/summarize run) names them all. A test that
# names two or more (the scenario's AF_UNIX run beside the capacity
# grid, the names table, the hostile reports) stays in tests/. So that the rule is
# known to catch a test put back, each experiment's own test that names
# one experiment must name its own.
# check: fast
# variants: release
# lane: side
# timeout: 60
. "$(dirname "$0")/../lib.sh"
cd "$top" || fail "cd $top"

# shellcheck disable=SC2016 # the backquotes are the table's
exps=$(sed -n 's/^| `\([a-z]*\)\/` | .*/\1/p' lab/README.md | tr '\n' ' ')
[ "$(wc -w <<<"$exps")" -ge 8 ] || fail "lab/README.md's table names $(wc -w <<<"$exps") experiments, expected 8 or more"
# "PROGRAM EXPERIMENT", a line each
progs=$(sed -n 's/.*call program,\([a-z0-9-]*\),lab\/\([a-z]*\).*/\1 \2/p' lab/lab.mk lab/*/*.mk)
grep -q '^demo-scenario demo$' <<<"$progs" || fail "no demo-scenario among lab's programs: $progs"

# "PROGRAM EXPERIMENT" of the experiments' programs only, and the
# alternatives of one grep that finds every name of them.
progs=$(awk -v exps=" $exps " 'index(exps, " " $2 " ")' <<<"$progs" | tr '\n' ' ' | tr -s ' ')
alt=$(tr -s ' \n' '|' <<<"$exps"); alt=${alt%|}
palt=$(awk '{ for (i = 1; i < NF; i += 2) printf "%s%s", (i > 1 ? "|" : ""), $i }' <<<"$progs")

# named FILE: the experiments FILE names, one a line, each once.
named() {
	if grep -qE 'lab\.results\b|lab/results\.py|from lab import results|report/(render|summarize)\b' "$1"; then
		tr -s ' ' '\n' <<<"$exps" | sed '/^$/d'
		return
	fi
	grep -ohE "lab/($alt)/|lab\.($alt)\b|\b($palt)\b" "$1" |
		awk -v progs="$progs" 'BEGIN { n = split(progs, p, " "); for (i = 1; i < n; i += 2) of[p[i]] = p[i + 1] }
			{ e = $0; sub(/^lab[\/.]/, "", e); sub(/\/$/, "", e); print (e in of) ? of[e] : e }' |
		sort -u
}

bad=0 seen=0
for f in tests/integration/* tests/vm/* tests/pylib/*.py; do
	[ -f "$f" ] || continue
	seen=$((seen + 1))
	e=$(named "$f")
	[ -n "$e" ] || continue
	[ "$(wc -l <<<"$e")" = 1 ] || continue
	echo "$f names the $e experiment and no other: its place is lab/$e/tests/ (git mv it there)" >&2
	bad=$((bad + 1))
done
[ "$seen" -gt 50 ] || fail "only $seen files under tests/integration, tests/vm and tests/pylib"
[ "$bad" = 0 ] || fail "$bad experiment test(s) outside their experiment's folder"

own=0
for f in lab/*/tests/*.sh lab/*/tests/*.py; do
	[ -f "$f" ] || continue
	e=$(named "$f")
	[ -n "$e" ] || continue
	[ "$(wc -l <<<"$e")" = 1 ] || continue
	home=${f#lab/}; home=${home%%/*}
	[[ " $exps " == *[[:space:]]"$home"[[:space:]]* ]] || continue
	[ "$e" = "$home" ] || fail "$f names only the $e experiment, not its own ($home)"
	own=$((own + 1))
done
[ "$own" -ge 10 ] || fail "only $own of the experiments' tests name their own experiment alone: the rule would catch few put back"
pass "$seen files of tests/ name no single experiment; $own of the experiments' own tests name theirs"
