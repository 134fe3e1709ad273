#!/usr/bin/env bash
# The fleet's loadgen role judging a load run, without test hosts: a run is
# done only when its .json says "interrupted": false (an .hlog alone, or the
# result of a run that was stopped, has it sent again), and a unit still
# running when the wait ends is stopped and fails the playbook, where
# systemd's Result= alone would say success. The host is this machine
# over ansible_connection local, in a mount namespace whose /etc and
# /var/lib are overlays of the test's own (the role writes
# /etc/relay/loadgen and reads /var/lib/loadgen); systemctl is a stand-in
# that logs what it is asked and plays the unit: a run that ends with a
# complete result, or one that never ends. (The role on real hosts is
# fleet/fleet_ansible.)
# timeout: 600
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
need_root "a mount namespace with /etc and /var/lib of the test's own"
command -v ansible-playbook >/dev/null || skip "no ansible-playbook (mk/deps fleet)"
if [ "${RELAY_TEST_MOUNTNS:-}" != "$TEST_TMP" ]; then
	export TEST_TMP RELAY_TEST_MOUNTNS=$TEST_TMP
	exec unshare --mount --propagation private "$0" "$@"
fi
mkdir -p "$TEST_TMP/ovl"
mount -t tmpfs relay-test "$TEST_TMP/ovl" || fail "cannot mount a tmpfs"
for d in /etc /var/lib; do
	o=$TEST_TMP/ovl/${d//\//-}
	mkdir -p "$o/upper" "$o/work"
	mount -t overlay relay-test -o "lowerdir=$d,upperdir=$o/upper,workdir=$o/work" "$d" ||
		fail "cannot lay an overlay on $d"
done
mkdir -p /etc/relay/loadgen /var/lib/loadgen

# systemctl for loadgen@t1.service: "start" runs it as $unit/mode says
# (ends: it writes a complete result and ends; hangs: it runs on), "stop"
# ends it as SIGTERM does, with an interrupted result; Result= is success
# throughout, as systemd's is until the unit fails.
unit=$TEST_TMP/unit shim=$TEST_TMP/shim
mkdir -p "$unit" "$shim"
cat >"$shim/systemctl" <<EOF
#!/bin/sh
echo "\$*" >>"$unit/calls"
[ "\$1" = -q ] && shift
result() { printf '{"interrupted": %s}\n' "\$1" >/var/lib/loadgen/t1.json; echo inactive >"$unit/state"; }
case \$1 in
start) echo active >"$unit/state"; [ "\$(cat "$unit/mode")" = hangs ] || result false ;;
stop) result true ;;
is-active) [ "\$(cat "$unit/state")" = active ] ;;
show)
	case \$3 in
	ActiveState) cat "$unit/state" ;;
	SubState) [ "\$(cat "$unit/state")" = active ] && echo running || echo dead ;;
	Result) echo success ;;
	esac ;;
esac
EOF
printf '#!/bin/sh\n' >"$shim/journalctl"
chmod +x "$shim/systemctl" "$shim/journalctl"

export ANSIBLE_HOME=$TEST_TMP/ansible ANSIBLE_LOCAL_TEMP=$TEST_TMP/ansible/tmp \
	ANSIBLE_CONFIG=$top/deploy/ansible/ansible.cfg ANSIBLE_NOCOLOR=1 ANSIBLE_STRATEGY=linear
cat >"$TEST_TMP/hosts.yml" <<EOF
all:
  vars:
    ansible_python_interpreter: /usr/bin/python3
    fleet_id: t1
    loadgen_duration: 1
    loadgen_wait_margin: 2
  children:
    relay_hosts:
      hosts:
        r1: {fleet_address: 127.0.0.1}
    load_hosts:
      hosts:
        l1: {ansible_connection: local}
EOF
# fleet.yml's load play, as it is, and nothing else.
sed -n '/^- name: Run the load$/,/^$/p' "$top/deploy/ansible/fleet.yml" >"$TEST_TMP/load.yml"
grep -q 'roles: \[loadgen\]' "$TEST_TMP/load.yml" || fail "fleet.yml has no play 'Run the load' with the loadgen role"

# run NAME MODE: the load play with the unit playing MODE; its log in NAME.log.
run() {
	echo "$2" >"$unit/mode"
	echo inactive >"$unit/state"
	: >"$unit/calls"
	PATH=$shim:$PATH ansible-playbook -i "$TEST_TMP/hosts.yml" "$TEST_TMP/load.yml" >"$TEST_TMP/$1.log" 2>&1
}
started() { grep -q '^start loadgen@t1.service$' "$unit/calls"; }
interrupted() { grep -q '"interrupted": true' /var/lib/loadgen/t1.json; }

# The .hlog of a run whose result is missing.
echo '#[hlog of an earlier run]' >/var/lib/loadgen/t1.hlog
run hlog-only ends || { cat "$TEST_TMP/hlog-only.log"; fail "a run after an .hlog without a result failed"; }
started || fail "an .hlog without a .json counted as a run done: the load was not sent"
# A result that says the run was stopped.
printf '{"interrupted": true}\n' >/var/lib/loadgen/t1.json
run interrupted ends || { cat "$TEST_TMP/interrupted.log"; fail "the run after an interrupted one failed"; }
started || fail "an interrupted run counted as done: the load was not sent again"
interrupted && fail "the run again did not replace the interrupted result"
# A complete result: nothing is sent again.
run complete ends || { cat "$TEST_TMP/complete.log"; fail "the play failed on a run already done"; }
started && fail "a run whose result is complete was sent again"
pass "the load is sent again unless its .json says interrupted false"

# A run that does not end within loadgen_duration + loadgen_wait_margin.
rm /var/lib/loadgen/t1.json
run hangs hangs && { cat "$TEST_TMP/hangs.log"; fail "a unit still running after the wait passed as a run done"; }
grep -q 'loadgen@t1.service still active/running after 3 s: stopped; its result is an interrupted run' "$TEST_TMP/hangs.log" ||
	{ cat "$TEST_TMP/hangs.log"; fail "no word of the run still going"; }
grep -qx 'stop loadgen@t1.service' "$unit/calls" || fail "the run still going was not stopped"
pass "a run still going after the wait is stopped and fails the play, though Result= says success"
