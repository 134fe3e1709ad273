#!/usr/bin/env bash
# The units and files as "make install" lays them out: every file in its
# place with PREFIX in the commands and nothing enabled; systemd-analyze
# verify has nothing to say about any unit; relay.service is hardened to an
# exposure of at most 2.0 ("OK") without RestrictRealtime=; the default
# relay.conf passes relay --check-config. Each check is also run on a broken
# copy, which it must reject, so none of them passes by saying nothing.
# timeout: 180
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v systemd-analyze >/dev/null || skip "no systemd-analyze (apt-get install systemd)"
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || true)
unitdir=${unitdir:-/lib/systemd/system}
units="relay.service loadgen.slice loadgen@.service"

root=$TEST_TMP/root
make -C "$top" --no-print-directory -s install DESTDIR="$root" PREFIX=/usr >"$TEST_TMP/install.log" 2>&1 ||
	{ cat "$TEST_TMP/install.log"; fail "make install DESTDIR=... PREFIX=/usr"; }
for f in usr/bin/relay usr/bin/loadgen usr/sbin/relay-preflight usr/lib/relay/quota-check; do
	[ -x "$root/$f" ] || fail "make install: /$f missing or not executable"
done
for f in ${unitdir#/}/relay.service ${unitdir#/}/loadgen.slice ${unitdir#/}/loadgen@.service \
	usr/lib/sysusers.d/relay.conf etc/relay/relay.conf etc/relay/loadgen/smoke.conf \
	etc/relay/loadgen/unix.conf; do
	[ -f "$root/$f" ] || fail "make install: /$f missing"
done
for m in server/relay.8 loadgen/loadgen.1; do
	[ -f "$top/$m" ] || continue
	f=usr/share/man/man${m##*.}/$(basename "$m")
	[ -f "$root/$f" ] || fail "make install: /$f missing although $m exists"
done
wants=$(find "$root" -name '*.wants' -o -name '*.requires')
[ -z "$wants" ] || fail "make install enables something: $wants"
pass "make install PREFIX=/usr lays out every file and enables nothing"

# PREFIX reaches the units' commands; an edited config survives a reinstall.
local_root=$TEST_TMP/local
make -C "$top" --no-print-directory -s install DESTDIR="$local_root" >/dev/null 2>&1 ||
	fail "make install DESTDIR=... (default PREFIX)"
grep -qx 'ExecStart=/usr/local/bin/relay --config /etc/relay/relay.conf' "$local_root$unitdir/relay.service" ||
	fail "PREFIX=/usr/local: relay.service's ExecStart does not name /usr/local/bin/relay"
grep -qx 'ExecStartPre=/usr/local/lib/relay/quota-check' "$local_root$unitdir/loadgen@.service" ||
	fail "PREFIX=/usr/local: loadgen@.service's quota check is not under /usr/local"
echo "# edited" >>"$local_root/etc/relay/relay.conf"
make -C "$top" --no-print-directory -s install DESTDIR="$local_root" >/dev/null 2>&1
grep -qx '# edited' "$local_root/etc/relay/relay.conf" || fail "make install overwrote an edited relay.conf"
pass "PREFIX reaches the commands; an edited relay.conf is kept"

# verify_units DIR: systemd-analyze verify on the units in DIR, with their
# commands pointed into the install root (verify checks they exist). Any
# output is a failure: verify only warns, exit 0, about a malformed
# CPUQuota= that systemd would then ignore.
verify_units() {
	local d=$TEST_TMP/verify u out
	rm -rf "$d"; mkdir -p "$d"
	for u in $units; do
		sed "/^Exec/s|/usr/|$root/usr/|g" "$1/$u" >"$d/$u"
	done
	out=$(cd "$d" && systemd-analyze verify --man=no ./relay.service ./loadgen.slice ./loadgen@smoke.service 2>&1) ||
		{ echo "$out"; return 1; }
	[ -z "$out" ] || { echo "$out"; return 1; }
}
verify_units "$root$unitdir" || fail "systemd-analyze verify complains about the units"
broken=$TEST_TMP/broken
mkdir -p "$broken"
cp "$root$unitdir"/* "$broken/"
sed -i 's/^CPUQuota=.*/CPUQuota=ten percent/' "$broken/loadgen.slice"
verify_units "$broken" >/dev/null && fail "verify_units accepted a malformed CPUQuota="
pass "systemd-analyze verify: every unit clean (and a malformed quota is caught)"

# exposure FILE: the overall exposure of a unit file, failing above 2.0.
exposure() {
	local out level
	out=$(systemd-analyze security --offline=yes --threshold=20 "$1" 2>&1) || { echo "$out" | grep -v '^✓' >&2; return 1; }
	level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) \(OK\|SAFE\).*/\1/p' <<<"$out")
	[ -n "$level" ] || { echo "$out" | tail -n 3 >&2; return 1; }
	echo "$level"
}
level=$(exposure "$root$unitdir/relay.service") || fail "relay.service: exposure above 2.0 or not rated OK"
grep -q '^RestrictRealtime=' "$root$unitdir/relay.service" &&
	fail "relay.service sets RestrictRealtime=, which forbids SCHED_FIFO"
grep -Ev '^(Protect|Private|Restrict|SystemCall|Capability|NoNewPrivileges|LockPersonality|MemoryDeny|UMask|ProcSubset|RemoveIPC)' \
	"$root$unitdir/relay.service" >"$broken/relay.service"
exposure "$broken/relay.service" >/dev/null 2>&1 && fail "exposure accepted relay.service without its sandbox"
pass "relay.service exposure $level (at most 2.0, OK), no RestrictRealtime="
sed "/^Exec/s|/usr/|$root/usr/|g" "$root$unitdir/loadgen@.service" >"$TEST_TMP/loadgen@smoke.service"
level=$(exposure "$TEST_TMP/loadgen@smoke.service") || fail "loadgen@.service: exposure above 2.0 or not rated OK"
pass "loadgen@.service exposure $level (at most 2.0, OK)"

# loadgen@ reaches the shipped AF_UNIX listener: a socket file in relay's
# runtime directory of mode 0660, its group relay.service's Group=, which
# is loadgen@'s group (relay(8), deploy/README.md).
conf=$root/etc/relay/relay.conf
grep -qx 'listen = unix:///run/relay/relay.sock' "$conf" || fail "relay.conf has no unix:///run/relay listener"
grep -qx 'unix_mode = 0660' "$conf" || fail "relay.conf's unix listener is not 0660"
grep -qx 'RuntimeDirectory=relay' "$root$unitdir/relay.service" || fail "relay.service has no /run/relay"
grep -qx 'Group=relay' "$root$unitdir/relay.service" || fail "relay.service does not run as group relay"
grep -qx 'Group=relay' "$root$unitdir/loadgen@.service" || fail "loadgen@.service is not in group relay"
grep -qx 'LOADGEN_ARGS=--target unix:///run/relay/relay.sock .*' "$root/etc/relay/loadgen/unix.conf" ||
	fail "loadgen/unix.conf does not target the unix listener"
pass "loadgen@unix reaches relay.conf's unix listener: mode 0660, group relay on both units"

# The shipped config is one relay accepts; a broken one is refused with the
# configuration status and a message naming file and line.
[ -x "$RELAY" ] || fail "no relay binary at $RELAY"
out=$("$RELAY" --check-config --config "$root/etc/relay/relay.conf" 2>&1) ||
	fail "relay --check-config rejects the shipped relay.conf: $out"
sed 's/^cpus = .*/cpus = banana/' "$root/etc/relay/relay.conf" >"$TEST_TMP/bad.conf"
out=$("$RELAY" --check-config --config "$TEST_TMP/bad.conf" 2>&1); st=$?
[ $st = 78 ] || fail "relay --check-config on a bad config: exit $st, expected 78 ($out)"
grep -q "bad.conf:[0-9]*:" <<<"$out" || fail "relay's config error does not name file:line: $out"
pass "relay.conf passes relay --check-config; a bad one exits 78 with file:line"
