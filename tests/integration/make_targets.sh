#!/usr/bin/env bash
# Every `make TARGET` the project's documents name (README.md, lab/README.md,
# docs/*.md, report/README.md) is a target of the Makefile: make -n knows
# it. (kernel/README.md also names the kernel tree's own targets.)
# timeout: 180
# lane: side
# variants: release
# check: fast
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

cd "$top" || fail "no tree at $top"
docs=(README.md lab/README.md report/README.md docs/*.md)
mapfile -t targets < <(grep -ohE '`make [a-z][a-z0-9.-]*[a-z0-9]' "${docs[@]}" |
	sed 's/^`make //' | sort -u)
[ ${#targets[@]} -ge 10 ] || fail "only ${#targets[@]} make targets named in ${docs[*]}: the pattern is off"
for t in "${targets[@]}"; do
	make -n "$t" >/dev/null 2>"$TEST_TMP/err" ||
		fail "the documents name 'make $t', which the Makefile does not know: $(head -n 2 "$TEST_TMP/err")"
done
pass "${#targets[@]} make targets named in the documents all exist: ${targets[*]}"
