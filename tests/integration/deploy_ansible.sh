#!/usr/bin/env bash
# deploy/ansible's checks, without test hosts: both playbooks parse, a
# bad inventory stops fleet.yml in its first play, with Ansible's message
# naming what is wrong, before any host is touched, and relay.conf's
# template listens on loopback unless the inventory names an address. Each bad inventory is
# checked against a good one, where the same play must pass, so no refusal
# passes by refusing everything. The hosts are this machine over ansible_connection
# local, without become, in a network namespace of the test's own; the
# unreachable one is an SSH port nothing listens on there. (The playbook
# run on real guests is fleet/fleet_ansible.)
# timeout: 600
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
need_root "a network namespace of the test's own"
command -v ansible-playbook >/dev/null || skip "no ansible-playbook (mk/deps fleet)"
ns=relay-ansible-$$
ip netns add "$ns" || fail "cannot make a network namespace"
trap 'ip netns del "$ns" 2>/dev/null; cleanup_bg' EXIT
ip netns exec "$ns" ip link set lo up

export ANSIBLE_HOME=$TEST_TMP/ansible ANSIBLE_LOCAL_TEMP=$TEST_TMP/ansible/tmp \
	ANSIBLE_CONFIG=$top/deploy/ansible/ansible.cfg ANSIBLE_NOCOLOR=1
deb=$TEST_TMP/relay.deb kdeb=$TEST_TMP/linux-image.deb notdeb=$TEST_TMP/notes.txt
echo "not a package" >"$notdeb"
# The smallest packages that dpkg-deb reads: one named relay, one named as
# a kernel image is.
for p in relay:"$deb" linux-image-6.12.0-test:"$kdeb"; do
	d=$TEST_TMP/pkg-${p%%:*}
	mkdir -p "$d/DEBIAN"
	printf 'Package: %s\nVersion: 1\nArchitecture: all\nMaintainer: test <t@example.org>\nDescription: test\n' \
		"${p%%:*}" >"$d/DEBIAN/control"
	dpkg-deb --build "$d" "${p#*:}" >/dev/null || fail "dpkg-deb --build ${p%%:*}"
done

ansible-playbook -i localhost, --syntax-check "$top/deploy/ansible/fleet.yml" "$top/deploy/ansible/undo.yml" \
	>"$TEST_TMP/syntax.log" 2>&1 || { cat "$TEST_TMP/syntax.log"; fail "fleet.yml or undo.yml does not parse"; }

# inventory FILE RELAY_HOST_VARS [EXTRA_HOST_LINE]: r1 and l1 are this
# machine (a line of $3 goes beside r1 among the relay hosts).
inventory() {
	cat >"$1" <<-EOF
	all:
	  vars:
	    ansible_connection: local
	    ansible_python_interpreter: /usr/bin/python3
	    ansible_become: false
	    relay_deb: $deb
	    fleet_id: t1
	    fleet_remote_dir: $TEST_TMP/remote
	    fleet_results: $TEST_TMP/results
	  children:
	    relay_hosts:
	      hosts:
	        r1: {$2}
	$3
	    load_hosts:
	      hosts:
	        l1: {}
	EOF
}
# run NAME: fleet.yml's first play only, on inventory NAME.yml.
run() {
	ip netns exec "$ns" ansible-playbook -i "$TEST_TMP/$1.yml" "$TEST_TMP/preflight-only.yml" >"$TEST_TMP/$1.log" 2>&1
}
# The first play of fleet.yml as it is, and nothing after it: the plays
# after it would install packages on this machine.
fleet=$top/deploy/ansible/fleet.yml
first=$(grep -m1 '^- name: ' "$fleet")
sed -n "/^$first\$/,/^\$/p" "$fleet" >"$TEST_TMP/preflight-only.yml"
if ! grep -qx '  roles: \[preflight\]' "$TEST_TMP/preflight-only.yml" ||
	! grep -qx '  any_errors_fatal: true' "$TEST_TMP/preflight-only.yml"; then
	cat "$TEST_TMP/preflight-only.yml"; fail "fleet.yml's first play ($first) is not the checks, stopping every host"
fi
refused() {	# NAME WHAT MESSAGE-REGEX
	run "$1" && { cat "$TEST_TMP/$1.log"; fail "$2: the first play passed"; }
	grep -Eq "$3" "$TEST_TMP/$1.log" || { cat "$TEST_TMP/$1.log"; fail "$2: no word of it"; }
	[ ! -e "$TEST_TMP/remote" ] || fail "$2: something was written on a host"
	echo "refused, $2: $(grep -Eo "$3" "$TEST_TMP/$1.log" | head -n 1)"
}
accepted() {	# NAME WHAT
	run "$1" || { cat "$TEST_TMP/$1.log"; fail "$2: refused"; }
}

# A relay host as an inventory should give it: where load hosts send, where
# relay listens, and an upstream that is not relay itself.
r1="fleet_address: 10.0.0.1, relay_listen_address: 10.0.0.1, relay_upstream: 'udp://10.0.0.9:7400'"
inventory "$TEST_TMP/good.yml" "$r1" \
	"        r2: {fleet_address: 10.0.0.2, relay_listen_address: 0.0.0.0, relay_allow_open_echo: true, relay_kernel_deb: $kdeb, relay_kernel_boot: kexec}"
accepted good "a relay host with an upstream; one answering itself where it is allowed to, with a kernel package booted with kexec"

inventory "$TEST_TMP/no-address.yml" "relay_listen_address: 10.0.0.1, relay_upstream: 'udp://10.0.0.9:7400'"
refused no-address "a relay host without fleet_address" "r1: fleet_address, the address load hosts send to, is not set"
inventory "$TEST_TMP/no-listen.yml" "fleet_address: 10.0.0.1, relay_upstream: 'udp://10.0.0.9:7400'"
refused no-listen "a relay host without relay_listen_address" "r1: relay_listen_address is 127.0.0.1, loopback \(the default\): load hosts cannot reach relay there"
inventory "$TEST_TMP/open-echo.yml" "fleet_address: 10.0.0.1, relay_listen_address: 0.0.0.0"
refused open-echo "upstream echo on 0.0.0.0" "r1: relay_upstream echo on 0.0.0.0 would make relay an open UDP reflector"
inventory "$TEST_TMP/bad-kernel.yml" "$r1, relay_kernel_deb: $notdeb"
refused bad-kernel "relay_kernel_deb not a package" "r1: relay_kernel_deb: [^ ]*notes.txt is not a Debian package on this machine"
inventory "$TEST_TMP/not-kernel.yml" "$r1, relay_kernel_deb: $deb"
refused not-kernel "relay_kernel_deb not a kernel image" "r1: relay_kernel_deb: [^ ]*relay.deb is the package relay, not a kernel image \(linux-image-\*\)"
inventory "$TEST_TMP/bad-boot.yml" "$r1, relay_kernel_deb: $kdeb, relay_kernel_boot: grub"
refused bad-boot "relay_kernel_boot grub" "r1: relay_kernel_boot is 'grub': reboot \(through the boot loader\) or kexec"
inventory "$TEST_TMP/unreachable.yml" "$r1" \
	"        r2: {fleet_address: 10.0.0.2, relay_listen_address: 10.0.0.2, relay_upstream: 'udp://10.0.0.9:7400', ansible_connection: ssh, ansible_host: 127.0.0.1, ansible_port: 9}"
refused unreachable "a host that does not answer" "r2\]: UNREACHABLE! => [^}]*"
pass "fleet.yml's first play refuses 7 bad inventories and passes a good one"

# The relay.conf the relay role writes, rendered by Ansible from the
# fleet's defaults alone, then with an inventory's address and upstream;
# relay itself must accept each.
cat >"$TEST_TMP/render.yml" <<EOF
- name: Render relay.conf.j2
  hosts: localhost
  gather_facts: false
  roles: [fleet]
  tasks:
    - name: The relay role's template
      ansible.builtin.template:
        src: $top/deploy/ansible/roles/relay/templates/relay.conf.j2
        dest: "{{ out }}"
        mode: "0644"
EOF
render() {	# NAME [-e VAR=VALUE]...: render NAME.conf, which relay must accept
	local name=$1; shift
	ansible-playbook -i localhost, -c local -e "out=$TEST_TMP/$name.conf" "$@" "$TEST_TMP/render.yml" \
		>"$TEST_TMP/render-$name.log" 2>&1 || { cat "$TEST_TMP/render-$name.log"; fail "relay.conf.j2 does not render ($name)"; }
	"$RELAY" --check-config --config "$TEST_TMP/$name.conf" >"$TEST_TMP/check-$name.log" 2>&1 ||
		{ cat "$TEST_TMP/$name.conf" "$TEST_TMP/check-$name.log"; fail "relay refuses the $name relay.conf"; }
}
render defaults
grep -qx 'listen = udp://127.0.0.1:7300' "$TEST_TMP/defaults.conf" ||
	{ cat "$TEST_TMP/defaults.conf"; fail "by default the fleet's relay.conf does not listen on loopback only"; }
render named -e relay_listen_address=10.0.0.1 -e relay_upstream=udp://10.0.0.9:7400
if ! grep -qx 'listen = udp://10.0.0.1:7300' "$TEST_TMP/named.conf" ||
	! grep -qx 'upstream = udp://10.0.0.9:7400' "$TEST_TMP/named.conf"; then
	cat "$TEST_TMP/named.conf"; fail "relay.conf does not listen and forward where the inventory says"
fi
pass "relay.conf.j2 listens on loopback by default, where the inventory says otherwise; relay accepts both"
