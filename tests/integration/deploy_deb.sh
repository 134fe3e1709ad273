#!/usr/bin/env bash
# make deb's package: what it installs (binaries, units, sysusers, default
# config as conffiles, man pages, relay-preflight), what it depends on (the
# libraries the binaries link, systemd, procps for ExecReload's kill), that
# it builds under a umask that keeps files private, and that its scripts
# create the user but enable and start nothing.
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
for f in /usr/bin/relay /usr/bin/loadgen /usr/sbin/relay-preflight /usr/lib/relay/quota-check \
	"$unitdir/relay.service" "$unitdir/loadgen.slice" "$unitdir/loadgen@.service" \
	/usr/lib/sysusers.d/relay.conf /etc/relay/relay.conf /etc/relay/loadgen/smoke.conf; do
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
for f in /etc/relay/relay.conf /etc/relay/loadgen/smoke.conf; do
	grep -qx "$f" "$ctl/conffiles" || fail "$f is not a conffile"
done
grep -q 'systemd-sysusers' "$ctl/postinst" || fail "postinst does not create the relay user"
grep -Eq 'systemctl +(enable|start|restart)|deb-systemd-helper +enable' "$ctl"/p* &&
	fail "a maintainer script enables or starts something"
for s in "$ctl"/postinst "$ctl"/prerm "$ctl"/postrm; do
	sh -n "$s" || fail "$(basename "$s") is not valid sh"
done
pass "conffiles, postinst creates the user, nothing enabled or started"

# postrm reloads systemd when the units go (remove), not again for a purge,
# which dpkg runs after the remove. Run with a systemctl that only logs,
# and a systemd directory of the test's.
mkdir -p "$TEST_TMP/shim" "$TEST_TMP/run-systemd"
printf '#!/bin/sh\necho "$*" >>"%s"\n' "$TEST_TMP/systemctl.log" >"$TEST_TMP/shim/systemctl"
chmod +x "$TEST_TMP/shim/systemctl"
sed "s|/run/systemd/system|$TEST_TMP/run-systemd|" "$ctl/postrm" >"$TEST_TMP/postrm"
for arg in remove purge; do
	: >"$TEST_TMP/systemctl.log"
	PATH=$TEST_TMP/shim:$PATH sh "$TEST_TMP/postrm" "$arg" || fail "postrm $arg exited $?"
	got=$(cat "$TEST_TMP/systemctl.log")
	want=$([ $arg = remove ] && echo daemon-reload)
	[ "$got" = "$want" ] || fail "postrm $arg ran systemctl '$got', not '$want'"
done
pass "postrm reloads systemd on remove, not again on purge"

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
