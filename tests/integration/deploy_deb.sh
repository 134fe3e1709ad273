#!/usr/bin/env bash
# make deb's package: what it installs (binaries, units, sysusers, default
# config as conffiles, man pages, relay-preflight), what it depends on (the
# libraries the binaries link, systemd, procps for ExecReload's kill), that
# it builds under a umask that keeps files private, and what its
# maintainer scripts do on install, upgrade, remove and purge: they create
# the user, enable and start nothing, restart a running relay on an
# upgrade and take its state away on a purge. (On a real systemd the
# upgrade is hostab/host_systemd's check.)
# timeout: 180
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
"$top/mk/deps" deploy >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install dpkg-dev (mk/deps deploy): $(tail -n 1 "$TEST_TMP/deps.log")"
# Under a umask that gives others nothing, as root's often is: the package
# must come out the same.
deb=$(umask 077 && "$top/deploy/mkdeb" "$TEST_TMP/deb") || fail "deploy/mkdeb under umask 077"
[ -f "$deb" ] || fail "mkdeb printed '$deb', which is not a file"
dpkg-deb -c "$deb" | awk '$1 !~ /^[-dl]r.xr.xr.x$/ && $1 !~ /^-r..r..r..$/' >"$TEST_TMP/private"
[ -s "$TEST_TMP/private" ] && { cat "$TEST_TMP/private"; fail "files in the package others cannot read (built under umask 077)"; }
pass "built under umask 077, every file readable"

[ "$(dpkg-deb -f "$deb" Package)" = relay ] || fail "package name is not relay"
depends=$(dpkg-deb -f "$deb" Depends)
for d in libc6 libevent libjansson4 libinih1 libsystemd0 systemd procps; do
	grep -q "$d" <<<"$depends" || fail "Depends lacks $d: $depends"
done
pass "control: relay, Depends: $depends"

unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$TEST_TMP/files"
for f in /usr/bin/relay /usr/bin/loadgen /usr/sbin/relay-preflight /usr/share/relay/kernel-markers /usr/lib/relay/quota-check \
	"$unitdir/relay.service" "$unitdir/loadgen.slice" "$unitdir/loadgen@.service" \
	/usr/lib/sysusers.d/relay.conf /etc/relay/relay.conf /etc/relay/loadgen/smoke.conf \
	/etc/relay/loadgen/unix.conf; do
	grep -qx "$f" "$TEST_TMP/files" || fail "the package lacks $f"
done
for m in server/relay.8 loadgen/loadgen.1; do
	[ -f "$top/$m" ] || continue
	f=/usr/share/man/man${m##*.}/$(basename "$m").gz
	grep -qx "$f" "$TEST_TMP/files" || fail "the package lacks $f although $m exists"
done
grep -E '\.(wants|requires)/' "$TEST_TMP/files" && fail "the package ships enablement links"
pass "the package holds binaries, units, sysusers.d, config, man pages, relay-preflight"

ctl=$TEST_TMP/control
dpkg-deb -e "$deb" "$ctl"
for f in /etc/relay/relay.conf /etc/relay/loadgen/smoke.conf /etc/relay/loadgen/unix.conf; do
	grep -qx "$f" "$ctl/conffiles" || fail "$f is not a conffile"
done
grep -q 'systemd-sysusers' "$ctl/postinst" || fail "postinst does not create the relay user"
grep -Eq 'systemctl +(enable|start|restart)|deb-systemd-helper +enable' "$ctl"/p* &&
	fail "a maintainer script enables or starts something"
for s in "$ctl"/postinst "$ctl"/prerm "$ctl"/postrm; do
	sh -n "$s" || fail "$(basename "$s") is not valid sh"
done
pass "conffiles, postinst creates the user, nothing enabled or started"

# The maintainer scripts as dpkg runs them, with a systemctl and a
# systemd-sysusers that only log, and a systemd directory and a state
# directory of the test's.
mkdir -p "$TEST_TMP/shim" "$TEST_TMP/run-systemd"
for c in systemctl systemd-sysusers; do
	printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$c" "$TEST_TMP/calls.log" >"$TEST_TMP/shim/$c"
	chmod +x "$TEST_TMP/shim/$c"
done
state=$TEST_TMP/var-lib-relay
# maint SCRIPT EXPECTED ARG...: run SCRIPT with ARGs; the commands it ran,
# one a line, must be EXPECTED.
maint() {
	local script=$1 want=$2 got; shift 2
	sed "s|/run/systemd/system|$TEST_TMP/run-systemd|; s|/var/lib/relay|$state|" "$ctl/$script" >"$TEST_TMP/$script"
	: >"$TEST_TMP/calls.log"
	PATH=$TEST_TMP/shim:$PATH sh "$TEST_TMP/$script" "$@" || fail "$script $* exited $?"
	got=$(cat "$TEST_TMP/calls.log")
	[ "$got" = "$want" ] || fail "$script $* ran '$got', not '$want'"
}
sysusers="systemd-sysusers /usr/lib/sysusers.d/relay.conf"
# A first install creates the user and starts nothing.
maint postinst "$sysusers
systemctl daemon-reload" configure
# An upgrade leaves relay running through the old package's prerm and
# restarts it, if it runs, once the new files and unit are in place.
maint prerm "" upgrade 0.1.0+2.gnew
maint postinst "$sysusers
systemctl daemon-reload
systemctl try-restart relay.service" configure 0.1.0+1.gold
pass "postinst: a first install starts nothing; an upgrade try-restarts relay.service, which prerm left running"
# A remove stops relay and the runs, then reloads systemd, and keeps the
# state; a purge, which dpkg runs after the remove, reloads nothing again
# and takes the state away.
mkdir -p "$state" && echo '{}' >"$state/stats.json"
maint prerm "systemctl stop relay.service loadgen@*.service" remove
maint postrm "systemctl daemon-reload" remove
[ -f "$state/stats.json" ] || fail "postrm remove took /var/lib/relay away"
maint postrm "" upgrade 0.1.0+2.gnew
[ -f "$state/stats.json" ] || fail "postrm upgrade took /var/lib/relay away"
maint postrm "" purge
[ ! -e "$state" ] || fail "postrm purge left /var/lib/relay"
pass "prerm and postrm: remove stops and reloads and keeps /var/lib/relay; purge removes it"

# The units inside the package name the packaged paths.
mkdir -p "$TEST_TMP/x"
dpkg-deb -x "$deb" "$TEST_TMP/x"
grep -qx 'ExecStart=/usr/bin/relay --config /etc/relay/relay.conf' "$TEST_TMP/x$unitdir/relay.service" ||
	fail "the packaged relay.service does not start /usr/bin/relay"
pass "packaged units run /usr/bin/relay"

# relay relays TCP and TLS too: what the package says of it must not call
# it a UDP relay.
for f in "$ctl/control" "$TEST_TMP/x$unitdir/relay.service" "$TEST_TMP/x/usr/lib/sysusers.d/relay.conf"; do
	grep -Hn 'UDP relay' "$f" && fail "${f#"$TEST_TMP"/} calls relay a UDP relay"
done
pass "the package describes relay as a UDP, TCP and TLS relay"
