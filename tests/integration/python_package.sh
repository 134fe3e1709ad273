#!/usr/bin/env bash
# The Python package tree installs as pyproject.toml says (pip, offline,
# with Debian's setuptools, into a fresh venv) and every module of it
# imports from the installed copy, away from the source tree: the package
# list is whole, and no module leans on the tree beside it (a sibling
# found from the directory it was started in, a sys.path edit).
# timeout: 180
# check: fast
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
for m in venv pip setuptools wheel; do
	python3 -c "import $m" 2>/dev/null || fail "python3 has no $m (mk/deps test installs python3-$m)"
done

# A copy of what the build reads (setuptools writes build/ and *.egg-info
# beside the sources).
src=$TEST_TMP/src
mkdir -p "$src"
(cd "$top" && git ls-files --cached --others --exclude-standard -- pyproject.toml '*.py' |
	while IFS= read -r f; do [ -f "$f" ] && printf '%s\n' "$f"; done |
	xargs -d '\n' cp --parents -t "$src") || fail "cannot copy the sources"
venv=$TEST_TMP/venv
python3 -m venv --without-pip --system-site-packages "$venv" || fail "python3 -m venv failed"
"$venv/bin/python" -m pip install --quiet --no-index --no-build-isolation --no-deps "$src" \
	>"$TEST_TMP/pip.log" 2>&1 || { cat "$TEST_TMP/pip.log"; fail "pip install of the tree failed"; }
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

# Every module the package list names (the tests' excepted: not installed).
(cd "$top" && sed -n 's/^include = \[\(.*\)\]$/\1/p' pyproject.toml | tr -d '",' |
	tr ' ' '\n' | sed -n 's/\.\*$//p' | sort -u) >"$TEST_TMP/roots"
[ -s "$TEST_TMP/roots" ] || fail "no packages in pyproject.toml's include"
# Each package at the top of the tree is among them, but for the tests'
# and make's own (tests, mk: never installed).
for d in "$top"/*/__init__.py; do
	p=$(basename "$(dirname "$d")")
	case $p in tests | mk) continue ;; esac
	grep -qx "$p" "$TEST_TMP/roots" || fail "$p/ is a package, but not in pyproject.toml's include"
done
(cd "$top" && xargs -I{} find {} -name '*.py' -not -path '*/tests/*' <"$TEST_TMP/roots" | sort) >"$TEST_TMP/modules"
n=$(wc -l <"$TEST_TMP/modules")
[ "$n" -gt 40 ] || fail "only $n modules found"
(cd / && xargs -d '\n' "$venv/bin/python" -P "$top/mk/pyimports.py" --from "$site" \
	<"$TEST_TMP/modules") || fail "a module does not import from the installed copy (above)"
pass "$n modules import from the installed package ($(wc -l <"$TEST_TMP/roots") packages)"
