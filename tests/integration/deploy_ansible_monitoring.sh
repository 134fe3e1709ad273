#!/usr/bin/env bash
# deploy/ansible/monitoring.yml on this machine (ansible_connection local,
# its places under the test's directory, no systemd): the kernel textfile
# relay-preflight writes for node_exporter and its unit and timer, the
# rules copied once promtool passed them (a broken rules file refused,
# the one in place kept), a second run changing nothing, and
# relay_monitoring_state=absent taking it all away.
# timeout: 300
# lane: side
# variants: release
. "$(dirname "$0")/../lib.sh"
command -v ansible-playbook >/dev/null || skip "no ansible-playbook (mk/deps fleet)"
command -v promtool >/dev/null || fail "no promtool (mk/deps test)"
export ANSIBLE_HOME=$TEST_TMP/ansible ANSIBLE_LOCAL_TEMP=$TEST_TMP/ansible/tmp \
	ANSIBLE_CONFIG=$top/deploy/ansible/ansible.cfg ANSIBLE_NOCOLOR=1
r=$TEST_TMP/root
cat >"$TEST_TMP/hosts.yml" <<-INVENTORY
all:
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    ansible_become: false
    relay_systemd: false
    relay_textfile_dir: $r/var/lib/prometheus/node-exporter
    relay_systemd_dir: $r/etc/systemd/system
    relay_prometheus_rules_dir: $r/etc/prometheus/rules
    relay_preflight: $top/deploy/preflight
  children:
    relay_hosts:
      hosts:
        h1: {}
    prometheus_hosts:
      hosts:
        h1: {}
INVENTORY
mkdir -p "$r/etc/systemd/system"
# play LOG [ARGS...]: monitoring.yml on the inventory, its output in LOG.
play() {
	local log=$TEST_TMP/$1; shift
	ansible-playbook -i "$TEST_TMP/hosts.yml" "$top/deploy/ansible/monitoring.yml" "$@" >"$log" 2>&1
}
play run1.log || { cat "$TEST_TMP/run1.log"; fail "monitoring.yml failed"; }
grep -q '^relay_kernel_info{eventpoll_lock=".*",throttle_model=".*",preempt_rt=".*",epoll_fix=".*"} 1$' \
	"$r/var/lib/prometheus/node-exporter/relay_kernel.prom" || fail "no kernel textfile written"
grep -qx "ExecStart=$top/deploy/preflight --textfile $r/var/lib/prometheus/node-exporter" \
	"$r/etc/systemd/system/relay-kernel-textfile.service" || fail "the unit does not run relay-preflight --textfile"
grep -qx 'OnUnitActiveSec=1d' "$r/etc/systemd/system/relay-kernel-textfile.timer" || fail "no timer"
cmp -s "$top/deploy/prometheus/relay.rules.yml" "$r/etc/prometheus/rules/relay.rules.yml" || fail "the rules are not in place"
play run2.log || { cat "$TEST_TMP/run2.log"; fail "the second run failed"; }
grep -Eq 'h1 +: ok=[0-9]+ +changed=0 ' "$TEST_TMP/run2.log" || { cat "$TEST_TMP/run2.log"; fail "the second run changed something"; }
pass "the textfile, its unit and timer, the rules; a second run changes nothing"

# Rules promtool refuses are not copied over the ones in place.
sed 's/^groups:/groupz:/' "$top/deploy/prometheus/relay.rules.yml" >"$TEST_TMP/bad.rules.yml"
play bad.log -e "relay_rules_source=$TEST_TMP/bad.rules.yml" && fail "monitoring.yml copied rules promtool refuses"
grep -q "failed to validate" "$TEST_TMP/bad.log" || { cat "$TEST_TMP/bad.log"; fail "the refusal does not say it failed to validate"; }
cmp -s "$top/deploy/prometheus/relay.rules.yml" "$r/etc/prometheus/rules/relay.rules.yml" || fail "the rules in place were replaced"
pass "rules promtool refuses are refused, the old ones kept"

play absent.log -e relay_monitoring_state=absent || { cat "$TEST_TMP/absent.log"; fail "relay_monitoring_state=absent failed"; }
for f in var/lib/prometheus/node-exporter/relay_kernel.prom etc/systemd/system/relay-kernel-textfile.service \
	etc/systemd/system/relay-kernel-textfile.timer etc/prometheus/rules/relay.rules.yml; do
	[ ! -e "$r/$f" ] || fail "relay_monitoring_state=absent left /$f"
done
pass "relay_monitoring_state=absent takes it away"
