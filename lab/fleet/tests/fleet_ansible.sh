#!/usr/bin/env bash
# A fleet driven by deploy/ansible: three Debian 12 test hosts (the systemd
# test host image plus openssh-server and Python: image --fleet) under
# QEMU, one relay host and two load hosts, on a private network between
# the guests (QEMU socket networking over multicast on the loopback of a
# network namespace the test makes) and reachable from here only through
# ports on that namespace's 127.0.0.1. The SSH key is made here and thrown
# away. Each host's disk is an overlay that outlives its reboots, and the
# harness boots the image's Debian kernel again when a guest reboots, as a
# boot loader would.
#
# make test runs it without the kernel package: relay forwards both load
# hosts' traffic across the private network, the results come back to
# results/<id>-fleet/<host>/, the merged count is the sum of the hosts' and
# its max the largest. A newer package, whose postinst does not restart
# relay, leaves relay1 running the new binary all the same. A second run
# changes nothing, and --check --diff says so; undo.yml leaves no relay installed or running. It runs alone,
# after every other test (# lane: alone): on 2 cores its three emulated
# hosts on the host's clock, beside the virtual-clock guests of
# capacity_quick and demo_ab, held those past their wall-clock limits.
#
# make test-fleet (RELAY_FLEET_FULL=1) does more (1606 s on a quiet 2-core
# host, over half of it installing and booting the kernel package and
# rebooting out of it under emulation): first two bad
# inventories (a missing variable, an unreachable host) are refused with
# Ansible's message and leave no host with relay or its kernel installed,
# or relay running (integration/deploy_ansible checks the same refusals in
# make test, without test hosts); and the relay host is given the patched
# kernel package, installs it and boots it with kexec (relay-preflight
# there reads the fix from its BTF), and undo.yml reboots it back onto
# Debian's kernel through the harness's boot loader. make test's
# host_systemd boots that package on a systemd host of its own.
#
# Ansible runs with Mitogen (deploy/ansible/ansible.cfg), which keeps one
# Python interpreter per host for a whole playbook run: on these emulated
# hosts a task costs a fraction of a second instead of several
# (deploy/README.md has the times).
# timeout: 2400
# needs: fleetimg kernel-debs
# lane: alone
. "$(dirname "$0")/../../../tests/lib.sh"
need_root "network namespaces, debootstrap and QEMU"
"$top/mk/deps" deploy fleet >"$TEST_TMP/deps.log" 2>&1 ||
	skip "cannot install Ansible, QEMU and debootstrap (mk/deps deploy fleet): $(tail -n 1 "$TEST_TMP/deps.log")"
t0=$SECONDS
say() { echo "[$((SECONDS - t0)) s] $*"; }

deb=$("$top/deploy/mkdeb" "$TEST_TMP/deb") || fail "deploy/mkdeb"
img=$("$top/deploy/hostimg/image" --fleet "$deb") || fail "deploy/hostimg/image --fleet"
full=${RELAY_FLEET_FULL:-0}
relay1_kernel=""
if [ "$full" = 1 ]; then
	# The relay host is given the patched kernel package of make kernel-debs.
	kdeb=$("$top/kernel/build" --line 6.12 --host | grep -- '-relay-patched_') ||
		fail "kernel/build --host gave no patched kernel package"
	krelease=$(dpkg-deb -f "$kdeb" Package | sed 's/^linux-image-//')
	relay1_kernel=", relay_kernel_deb: $kdeb, relay_kernel_boot: kexec"
fi
say "image $img"

ns=relay-fleet-$$
qemus=()
# Each guest runs in a session of its own (setsid), so that its whole
# process tree (boot, timeout, QEMU) goes with one kill.
cleanup() {
	local p d alive
	for d in "$TEST_TMP"/host-*; do [ -d "$d" ] && touch "$d/stop"; done
	for _ in $(seq 20); do	# 10 s to power off
		alive=
		for p in "${qemus[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ -n "$alive" ] || break
		sleep 0.5
	done
	for p in "${qemus[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	for p in "${qemus[@]}"; do wait "$p" 2>/dev/null; done
	ip netns del "$ns" 2>/dev/null
	# Each host's consoles (one per boot) and the playbooks' logs outlive
	# the test in build/test-fleet/.
	rm -rf "$top/build/test-fleet"
	for d in "$TEST_TMP"/host-*; do
		[ -d "$d/out" ] && mkdir -p "$top/build/test-fleet/${d##*/host-}" &&
			cp "$d"/out/*.log "$top/build/test-fleet/${d##*/host-}/" 2>/dev/null
	done
	cp "$TEST_TMP"/*.log "$top/build/test-fleet/" 2>/dev/null
	cleanup_bg
}
trap cleanup EXIT
trap 'exit 143' TERM
ip netns add "$ns" || fail "cannot make a network namespace"
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link set lo up
in_ns ip link set lo multicast on
in_ns ip route add 224.0.0.0/4 dev lo

ssh-keygen -q -t ed25519 -N '' -C relay-fleet-test -f "$TEST_TMP/key" || fail "ssh-keygen"
# machine SHARE QEMU_ARG...: a test host's firmware and boot loader. It
# boots the image's own (Debian's) kernel from the host's disk, an overlay
# that keeps what the guest writes, and boots it again when the guest
# reboots (at most 4 times), as a real host's boot loader would; a power-off
# or the harness's stop ends it.
machine() {
	local share=$1 boot; shift
	for boot in 1 2 3 4 5; do
		"$top/deploy/hostimg/boot" --disk "$share/disk.qcow2" "$img" "$share" 2350 "$@" || return
		[ ! -e "$share/stop" ] && grep -aq 'reboot: Restarting system' "$share/out/console.log" || return 0
		mv "$share/out/console.log" "$share/out/console-boot$boot.log"
	done
}
# host NAME INDEX PRIVATE_ADDR: boot one guest; ssh on 127.0.0.1:2200+INDEX.
host() {
	local name=$1 i=$2 addr=$3 share=$TEST_TMP/host-$1
	mkdir -p "$share"
	install -m 0755 "$FIXTURES/fleet/guest" "$share/guest"
	cp "$TEST_TMP/key.pub" "$share/authorized_keys"
	printf 'NAME=%s\nSSH_MAC=52:54:00:12:00:0%d\nPRIVATE_MAC=52:54:00:77:00:0%d\nPRIVATE_ADDR=%s/24\nLIMIT=2300\n' \
		"$name" "$i" "$i" "$addr" >"$share/fleet.env"
	qemu-img create -q -f qcow2 -F raw -b "$img/rootfs.img" "$share/disk.qcow2" || fail "qemu-img create"
	setsid ip netns exec "$ns" bash -c "top=$top img=$img; $(declare -f machine); machine \"\$@\"" _ "$share" \
		-smp 1,sockets=1,cores=1,threads=1 -m 512 \
		-netdev "user,id=ssh,restrict=on,hostfwd=tcp:127.0.0.1:$((2200 + i))-:22" \
		-device "virtio-net-pci,netdev=ssh,mac=52:54:00:12:00:0$i" \
		-netdev socket,id=priv,mcast=230.0.0.1:31000,localaddr=127.0.0.1 \
		-device "virtio-net-pci,netdev=priv,mac=52:54:00:77:00:0$i" \
		>"$TEST_TMP/boot-$name.log" 2>&1 &
	qemus+=($!)
}
host relay1 1 10.77.0.11
host load1 2 10.77.0.12
host load2 3 10.77.0.13
# Booting under emulation takes from 1 to over 10 minutes, with the host's
# load: wait up to 20 minutes for all three, saying how long it took.
deadline=$((SECONDS + 1200))
for name in relay1 load1 load2; do
	while [ ! -f "$TEST_TMP/host-$name/out/ready" ] && [ $SECONDS -lt $deadline ]; do
		for p in "${qemus[@]}"; do kill -0 "$p" 2>/dev/null ||
			{ tail -n 5 "$TEST_TMP"/boot-*.log "$TEST_TMP"/host-*/out/console.log "$TEST_TMP"/host-*/out/guest.log
			  fail "a test host stopped while booting"; }; done
		sleep 1
	done
	[ -f "$TEST_TMP/host-$name/out/ready" ] ||
		{ tail -n 20 "$TEST_TMP/host-$name/out/console.log"; fail "$name did not come up in 20 minutes"; }
done
say "three hosts booted"
# sshd in an emulated guest on a busy host can take a minute to answer.
ssh_to() {
	local port=$1; shift
	in_ns ssh -i "$TEST_TMP/key" -o StrictHostKeyChecking=no -o UserKnownHostsFile="$TEST_TMP/known_hosts" \
		-o ConnectTimeout=120 -o BatchMode=yes -p "$port" root@127.0.0.1 "$@"
}
for port in 2201 2202 2203; do
	until ssh_to "$port" true 2>"$TEST_TMP/ssh.err"; do
		[ $SECONDS -lt $deadline ] || fail "no SSH on port $port: $(cat "$TEST_TMP/ssh.err")"
		sleep 2
	done
done
say "three hosts answer over SSH"

# Ansible's own files stay in the test's directory. The hosts are new each
# run, with keys no known_hosts has: Mitogen checks host keys itself and
# does not take ssh's StrictHostKeyChecking from ansible_ssh_common_args.
export ANSIBLE_HOME=$TEST_TMP/ansible ANSIBLE_LOCAL_TEMP=$TEST_TMP/ansible/tmp \
	ANSIBLE_SSH_CONTROL_PATH_DIR=$TEST_TMP/ansible/cp ANSIBLE_NOCOLOR=1 \
	ANSIBLE_CONFIG=$top/deploy/ansible/ansible.cfg ANSIBLE_TIMEOUT=120 \
	ANSIBLE_HOST_KEY_CHECKING=False
results=$TEST_TMP/results
# inventory FILE [EXTRA_LOAD_HOST_LINE] [RELAY_ADDRESS_LINE]: relay1 listens
# on the private network only and answers itself there (echo), which
# nothing but the guests can reach.
inventory() {
	cat >"$1" <<-EOF
	all:
	  vars:
	    ansible_user: root
	    ansible_host: 127.0.0.1
	    ansible_ssh_private_key_file: $TEST_TMP/key
	    ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=$TEST_TMP/known_hosts -o ConnectTimeout=120
	    relay_deb: $deb
	    fleet_id: t1
	    fleet_results: $results
	    fleet_loadgen: $LOADGEN
	    loadgen_rate: 200
	    loadgen_duration: 5
	    loadgen_cpu_quota: 50%
	    # an emulated relay host on a busy machine can take seconds to answer
	    loadgen_extra_args: --timeout 10s
	  children:
	    relay_hosts:
	      hosts:
	        relay1: {ansible_port: 2201, relay_listen_address: 10.77.0.11, relay_allow_open_echo: true$relay1_kernel${3-, fleet_address: 10.77.0.11}}
	    load_hosts:
	      hosts:
	        load1: {ansible_port: 2202}
	        load2: {ansible_port: 2203}
	$2
	EOF
}
playbook() { in_ns ansible-playbook -i "$1" "${@:2}" "$top/deploy/ansible/fleet.yml"; }
# Nothing of relay on any host: not installed, nothing running.
untouched() {
	local port
	for port in 2201 2202 2203; do
		ssh_to "$port" '! dpkg -s relay >/dev/null 2>&1 && ! systemctl -q is-active relay &&
			! ls /boot/vmlinuz-*-relay-* >/dev/null 2>&1' ||
			fail "$1: the host on port $port has relay or its kernel installed, or relay running"
	done
}

if [ "$full" = 1 ]; then
	inventory "$TEST_TMP/no-address.yml" "" ""
	playbook "$TEST_TMP/no-address.yml" >"$TEST_TMP/no-address.log" 2>&1 && fail "the playbook ran without fleet_address"
	grep -q "fleet_address, the address load hosts send to, is not set" "$TEST_TMP/no-address.log" ||
		{ cat "$TEST_TMP/no-address.log"; fail "no word of the missing fleet_address"; }
	untouched "missing fleet_address"
	say "missing variable refused: $(grep -m1 'is not set' "$TEST_TMP/no-address.log" | sed 's/^ *//')"

	inventory "$TEST_TMP/unreachable.yml" "        load3: {ansible_port: 2299}"
	playbook "$TEST_TMP/unreachable.yml" >"$TEST_TMP/unreachable.log" 2>&1 && fail "the playbook ran with a host unreachable"
	grep -q "load3.*UNREACHABLE" "$TEST_TMP/unreachable.log" ||
		{ cat "$TEST_TMP/unreachable.log"; fail "no word of the unreachable load3"; }
	untouched "unreachable load3"
	say "unreachable host refused"
fi

inventory "$TEST_TMP/fleet.yml"
playbook "$TEST_TMP/fleet.yml" >"$TEST_TMP/run1.log" 2>&1 || { cat "$TEST_TMP/run1.log"; fail "the playbook failed"; }
sed -n '/PLAY RECAP/,$p' "$TEST_TMP/run1.log"
say "first run done"
dir=$results/t1-fleet
for f in relay1/relay.json relay1/relay.conf load1/loadgen.json load1/loadgen.hlog load2/loadgen.json \
	load2/loadgen.hlog merged.json merged.hgrm; do
	[ -s "$dir/$f" ] || fail "no $f in results/t1-fleet/"
done
python3 "$FIXTURES/fleet/merged.py" "$dir" udp://10.77.0.11:7300 || fail "the merged result does not add up"
if [ "$full" = 1 ]; then
	# relay1 was given the patched kernel package and runs it; the load hosts
	# keep Debian's.
	booted=$(ssh_to 2201 uname -r) || fail "no uname -r from relay1"
	[ "$booted" = "$krelease" ] || fail "relay1 runs $booted, not $krelease"
	for port in 2202 2203; do
		k=$(ssh_to "$port" uname -r) || fail "no uname -r from the host on port $port"
		[ "$k" != "$krelease" ] || fail "the load host on port $port was given $krelease"
	done
	if ! grep '^ok .*PREEMPT_RT: yes' "$dir/relay1/preflight.txt" ||
		! grep "^ok .*epoll ready-list fix: present; decided from the running kernel's BTF: struct eventpoll's lock is spinlock_t" "$dir/relay1/preflight.txt"; then
		cat "$dir/relay1/preflight.txt"; fail "relay-preflight on relay1 does not see the patched PREEMPT_RT kernel"
	fi
	say "relay1 installed and booted $krelease (kexec)"
fi

# A newer package over the running fleet, one whose postinst restarts
# nothing, as every build before relay's postinst did: the playbook itself
# must leave relay1 serving from the new binary, not the old process
# running from a deleted file while dpkg names the new version.
next=$TEST_TMP/relay-next.deb
dpkg-deb -R "$deb" "$TEST_TMP/next" || fail "cannot unpack $deb"
sed -i 's/^Version: .*/&+next/' "$TEST_TMP/next/DEBIAN/control"
sed -i 's/systemctl try-restart relay.service/:/' "$TEST_TMP/next/DEBIAN/postinst"
grep -q 'try-restart' "$TEST_TMP/next/DEBIAN/postinst" && fail "the newer package's postinst still restarts relay"
sh -n "$TEST_TMP/next/DEBIAN/postinst" || fail "the newer package's postinst is not valid sh"
dpkg-deb --root-owner-group -b "$TEST_TMP/next" "$next" >/dev/null || fail "cannot build $next"
pid=$(ssh_to 2201 systemctl show -P MainPID relay.service) || fail "no relay process on relay1"
deb=$next
inventory "$TEST_TMP/fleet.yml"
playbook "$TEST_TMP/fleet.yml" >"$TEST_TMP/upgrade.log" 2>&1 || { cat "$TEST_TMP/upgrade.log"; fail "the run with a newer package failed"; }
sed -n '/PLAY RECAP/,$p' "$TEST_TMP/upgrade.log"
# shellcheck disable=SC2016 # expanded on relay1
new=$(ssh_to 2201 'pid=$(systemctl show -P MainPID relay.service); echo "$pid $(readlink /proc/$pid/exe) $(dpkg-query -W -f="\${Version}" relay)"') ||
	fail "nothing from relay1 after the upgrade"
echo "relay1: pid $pid before the newer package; pid, binary, version after it: $new"
read -r npid nexe nver <<<"$new"
[ "$nver" = "$(dpkg-deb -f "$next" Version)" ] || fail "relay1 has relay $nver installed, not the newer package"
if [ "$npid" = "$pid" ] || [ "$nexe" != /usr/bin/relay ]; then
	fail "relay1 still runs the relay of before the upgrade: pid $npid, $nexe"
fi
say "a newer package: relay1 restarted on it"

playbook "$TEST_TMP/fleet.yml" >"$TEST_TMP/run2.log" 2>&1 || { cat "$TEST_TMP/run2.log"; fail "the second run failed"; }
sed -n '/PLAY RECAP/,$p' "$TEST_TMP/run2.log"
grep -E '^(relay1|load1|load2|localhost) +:' "$TEST_TMP/run2.log" | grep -v 'changed=0 ' &&
	{ grep -B3 -A12 '^changed:' "$TEST_TMP/run2.log"; fail "the second run changed something"; }
say "second run: no changes"
playbook "$TEST_TMP/fleet.yml" --check --diff >"$TEST_TMP/check.log" 2>&1 || { cat "$TEST_TMP/check.log"; fail "--check --diff failed"; }
grep -E '^(relay1|load1|load2|localhost) +:' "$TEST_TMP/check.log" | grep -v 'changed=0 ' &&
	{ cat "$TEST_TMP/check.log"; fail "--check --diff shows changes"; }
say "--check --diff: no changes"
in_ns ansible-playbook -i "$TEST_TMP/fleet.yml" "$top/deploy/ansible/undo.yml" >"$TEST_TMP/undo.log" 2>&1 ||
	{ cat "$TEST_TMP/undo.log"; fail "undo.yml failed"; }
untouched "undo.yml"
if [ "$full" = 1 ]; then
	booted=$(ssh_to 2201 uname -r) || fail "no uname -r from relay1 after undo.yml"
	[ "$booted" = "$(ssh_to 2202 uname -r)" ] || fail "undo.yml left relay1 on $booted, not Debian's kernel"
	say "undo.yml: relay1 back on $booted"
fi
say "undo.yml: relay purged and stopped everywhere"
pass "fleet of 3 test hosts under Ansible$([ "$full" = 1 ] && echo ", with the kernel package and the refusals") ($((SECONDS - t0)) s)"
