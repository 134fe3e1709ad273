#!/usr/bin/env bash
# relay-preflight on made-up hosts (a root with the /proc, /sys and /boot
# files it reads, and dpkg's database): every way it decides the fix, what
# Debian's kernel package version carries, the RT_GROUP_SCHED trap,
# a missing cpu controller, relay's CPUs not isolated; then on this machine,
# a busy task on relay's CPU.
# timeout: 240
# variants: release
. "$(dirname "$0")/../lib.sh"
pf=$top/deploy/preflight

# host DIR RELEASE VERSION [--rt] [--config LINES] [--v1] [--no-cpu]
#      [--dpkg PACKAGE VERSION]
# --dpkg: dpkg's database under DIR says PACKAGE VERSION is installed and
# owns /boot/vmlinuz-RELEASE (PACKAGE "-": a database where nothing does).
host() {
	local d=$1 rel=$2 ver=$3; shift 3
	rm -rf "$d"
	mkdir -p "$d/proc/sys/kernel" "$d/sys/kernel" "$d/sys/fs/cgroup" "$d/boot"
	echo "$rel" >"$d/proc/sys/kernel/osrelease"
	echo "$ver" >"$d/proc/sys/kernel/version"
	echo "cgroup2 /sys/fs/cgroup cgroup2 rw 0 0" >"$d/proc/mounts"
	echo "cpuset cpu io memory pids" >"$d/sys/fs/cgroup/cgroup.controllers"
	# shellcheck disable=SC2086 # --config's words: one option a line
	while [ $# -gt 0 ]; do
		case $1 in
		--rt) echo 1 >"$d/sys/kernel/realtime" ;;
		--config) printf '%s\n' $2 >"$d/boot/config-$rel"; shift ;;
		--v1) echo "cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0" >"$d/proc/mounts"
		      mkdir -p "$d/sys/fs/cgroup/cpu"; touch "$d/sys/fs/cgroup/cpu/cpu.cfs_quota_us" ;;
		--no-cpu) echo "cpuset io memory pids" >"$d/sys/fs/cgroup/cgroup.controllers" ;;
		--dpkg) mkdir -p "$d/var/lib/dpkg/info"
			: >"$d/var/lib/dpkg/status"
			if [ "$2" != - ]; then
				printf 'Package: %s\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\nDescription: Linux\n\n' \
					"$2" "$3" >"$d/var/lib/dpkg/status"
				printf '/.\n/boot\n/boot/vmlinuz-%s\n' "$rel" >"$d/var/lib/dpkg/info/$2.list"
			fi
			shift 2 ;;
		esac
		shift
	done
}

# expect NAME STATUS PATTERN...: run on $TEST_TMP/h (with $PF_ARGS); the
# exit status and every pattern (an extended regex on one line of the
# output) must match.
expect() {
	local name=$1 want=$2 got out; shift 2
	# shellcheck disable=SC2086 # PF_ARGS: preflight options, split
	out=$("$pf" --root "$TEST_TMP/h" --sample 0 ${PF_ARGS:-} 2>&1); got=$?
	[ "$got" = "$want" ] || { echo "$out"; fail "$name: exit $got, expected $want"; }
	for p in "$@"; do
		grep -Eq -- "$p" <<<"$out" || { echo "$out"; fail "$name: no line matches '$p'"; }
	done
	pass "$name"
}

ok_cfg="CONFIG_PREEMPT_DYNAMIC=y CONFIG_CFS_BANDWIDTH=y # CONFIG_RT_GROUP_SCHED is not set"
rt_cfg="CONFIG_PREEMPT_RT=y CONFIG_CFS_BANDWIDTH=y # CONFIG_RT_GROUP_SCHED is not set"

host "$TEST_TMP/h" 6.1.0-50-amd64 "#1 SMP PREEMPT_DYNAMIC Debian 6.1.176-1 (2025-10-01)" --config "$ok_cfg"
expect "Debian 6.1 non-RT" 0 '^note +PREEMPT_RT: no' \
	"^ok +epoll ready-list fix: present; decided from Debian's package version 6.1.176-1" \
	'^ok +RT group scheduling: CONFIG_RT_GROUP_SCHED is off' '^ok +cpu controller: available \(cgroup v2\)' \
	'^summary: nothing stands in the way'

host "$TEST_TMP/h" 6.12.43+deb12-rt-amd64 "#1 SMP PREEMPT_RT Debian 6.12.43-1~bpo12+1 (2025-09-01)" --rt --config "$rt_cfg"
expect "Debian 6.12 RT before the backport" 1 '^ok +PREEMPT_RT: yes \(from /sys/kernel/realtime\)' \
	"^act +epoll ready-list fix: MISSING on a PREEMPT_RT kernel; decided from Debian's package version 6.12.43-1~bpo12\+1" \
	'what to do: run a kernel that has it'

host "$TEST_TMP/h" 6.12.57+deb12-rt-amd64 "#1 SMP PREEMPT_RT Debian 6.12.57-1~bpo12+1 (2025-11-08)" --rt --config "$rt_cfg"
expect "Debian 6.12 RT with the backport" 0 "^ok +epoll ready-list fix: present; decided from Debian's package version 6.12.57-1"

host "$TEST_TMP/h" 6.12.117-relay-stock "#1 SMP PREEMPT_RT Tue Jan 1 00:00:00 UTC 2026" --config "$rt_cfg"
expect "this project's stock build" 1 '^ok +PREEMPT_RT: yes \(from /boot/config-6.12.117-relay-stock\)' \
	'^act +epoll ready-list fix: MISSING .*decided from the release names this project.s stock build'

host "$TEST_TMP/h" 6.12.117-relay-patched "#1 SMP PREEMPT_RT Tue Jan 1 00:00:00 UTC 2026"
expect "this project's patched build, no config" 1 '^ok +PREEMPT_RT: yes \(from uname -v\)' \
	'^ok +epoll ready-list fix: present; decided from the release names this project.s patched build' \
	'^unknown +RT group scheduling: cannot tell'

host "$TEST_TMP/h" 6.6.60-rt46 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
expect "a stable line with no known first fixed release" 1 \
	'^unknown +epoll ready-list fix: unknown; tried the release 6.6.60-rt46, taken as an upstream stable release.*does not know the first fixed release'

host "$TEST_TMP/h" 6.1.150-rt60 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
expect "6.1 stable before 6.1.159" 1 '^act +epoll ready-list fix: MISSING'

host "$TEST_TMP/h" 6.18.2 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
expect "mainline 6.18" 0 '^ok +epoll ready-list fix: present; decided from the release 6.18.2'

host "$TEST_TMP/h" 5.15.0-100-generic "#110-Ubuntu SMP PREEMPT_RT" --rt --config "$rt_cfg"
expect "a distribution ABI release" 1 '^unknown +epoll ready-list fix: .*distribution ABI name'

host "$TEST_TMP/h" 4.19.300-rt130 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
expect "before the rwlock" 0 '^ok +epoll ready-list fix: not needed'

host "$TEST_TMP/h" 6.12.57-rt "#1 SMP PREEMPT_RT" --rt \
	--config "CONFIG_PREEMPT_RT=y CONFIG_CFS_BANDWIDTH=y CONFIG_RT_GROUP_SCHED=y"
expect "RT_GROUP_SCHED with cgroup v2" 1 \
	'^act +RT group scheduling: CONFIG_RT_GROUP_SCHED=y .* with cgroup v2: .*214/SETSCHEDULER' \
	'what to do: boot a kernel built without CONFIG_RT_GROUP_SCHED'

host "$TEST_TMP/h" 6.12.57-rt "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg" --v1
expect "cgroup v1 with the cpu controller" 0 '^ok +cpu controller: available \(cgroup v1'

host "$TEST_TMP/h" 6.12.57-rt "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg" --no-cpu
expect "no cpu controller" 1 '^act +cpu controller: not in /sys/fs/cgroup/cgroup.controllers'

host "$TEST_TMP/h" 6.12.57-rt "#1 SMP PREEMPT_RT" --rt \
	--config "CONFIG_PREEMPT_RT=y # CONFIG_CFS_BANDWIDTH is not set # CONFIG_RT_GROUP_SCHED is not set"
expect "no CFS bandwidth control" 1 '^act +CPU bandwidth control: CONFIG_CFS_BANDWIDTH is off'

# Debian's kernel package: which one owns the running kernel, and what its
# version carries (Debian's changelogs: the fix from 6.1.159-1 and
# 6.12.57-1, the follow-up from 6.12.100-1 and in no 6.1 package through
# 6.1.192-3). uname -v names no Debian version here, so the package decides.
fu='"eventpoll: Fix epoll_wait\(\) report false negative"'
# debian_host VERSION [PACKAGE]: a PREEMPT_RT host whose kernel package is
# PACKAGE (linux-image-6.1.0-38-rt-amd64) at VERSION.
debian_host() {
	host "$TEST_TMP/h" 6.1.0-38-rt-amd64 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg" \
		--dpkg "${2:-linux-image-6.1.0-38-rt-amd64}" "$1"
}
debian_host 6.1.187-1
expect "Debian 6.1 RT package with the fix" 0 \
	"^ok +epoll ready-list fix: present; decided from the version of Debian's package linux-image-6.1.0-38-rt-amd64, 6.1.187-1" \
	"^ok +kernel package: linux-image-6.1.0-38-rt-amd64 6.1.187-1 \(owns /boot/vmlinuz-6.1.0-38-rt-amd64\): has the fix \(Debian 6.1 from 6.1.159-1\); lacks the follow-up $fu \(in no Debian 6.1 package through 6.1.192-3\)"
debian_host 6.1.159-1
expect "Debian 6.1.159-1, the first with the fix" 0 "^ok +kernel package: .* 6.1.159-1 .*: has the fix"
debian_host 6.1.158-1
expect "Debian 6.1.158-1, the last without" 1 \
	"^act +epoll ready-list fix: MISSING on a PREEMPT_RT kernel; decided from the version of Debian's package linux-image-6.1.0-38-rt-amd64, 6.1.158-1" \
	"^note +kernel package: .* 6.1.158-1 .*: lacks the fix \(Debian 6.1 has it from 6.1.159-1\); lacks the follow-up"
debian_host 6.1.8-1
expect "Debian 6.1.8-1, bookworm's release kernel" 1 "^act +epoll ready-list fix: MISSING" \
	"^note +kernel package: linux-image-6.1.0-38-rt-amd64 6.1.8-1 .*: lacks the fix"
debian_host 6.1.200-1
expect "a Debian 6.1 package newer than the table" 0 \
	"^ok +kernel package: .* 6.1.200-1 .*: has the fix .*; the follow-up $fu unknown: 6.1.200-1 is newer than 6.1.192-3"
debian_host 6.12.57-1~bpo12+1 linux-image-6.12.57+bpo-rt-amd64
expect "Debian 6.12 backport with the fix" 0 \
	"^ok +kernel package: linux-image-6.12.57\+bpo-rt-amd64 6.12.57-1~bpo12\+1 .*: has the fix \(Debian 6.12 from 6.12.57-1\); lacks the follow-up $fu \(Debian 6.12 has it from 6.12.100-1\)"
debian_host 6.12.43-1~bpo12+1
expect "Debian 6.12 backport before the fix" 1 "^act +epoll ready-list fix: MISSING.*6.12.43-1~bpo12\+1" \
	"^note +kernel package: .*: lacks the fix \(Debian 6.12 has it from 6.12.57-1\); lacks the follow-up"
debian_host 6.12.99-1
expect "Debian 6.12.99-1, before the follow-up" 0 "^ok +kernel package: .* 6.12.99-1 .*: has the fix .*; lacks the follow-up"
debian_host 6.12.100-1~bpo12+1
expect "Debian 6.12.100-1's backport, the first with the follow-up" 0 "^ok +kernel package: .*: has the fix .*; has the follow-up"
debian_host 6.12.117-1~deb12u1
expect "Debian 6.12 with the fix and the follow-up" 0 \
	"^ok +kernel package: .* 6.12.117-1~deb12u1 .*: has the fix \(Debian 6.12 from 6.12.57-1\); has the follow-up $fu \(Debian 6.12 from 6.12.100-1\)"
debian_host 6.16.12-1~bpo13+1 linux-image-6.16.12+deb13-rt-amd64
expect "Debian 13's 6.16, without either change" 1 "^act +epoll ready-list fix: MISSING.*6.16.12-1~bpo13\+1" \
	"^note +kernel package: linux-image-6.16.12\+deb13-rt-amd64 6.16.12-1~bpo13\+1 .*: lacks the epoll change \(no Debian 6.16 package has it\)"
debian_host 6.17.13-1~bpo13+1 linux-image-6.17.13+deb13-rt-amd64
expect "Debian 13's 6.17.13, the epoll change alone" 0 \
	"^ok +kernel package: .* 6.17.13-1~bpo13\+1 .*: has the epoll change .* and the per-cfs_rq throttle model"
debian_host 7.3.4-1~bpo13+1 linux-image-7.3.4+deb13-rt-amd64
expect "Debian 13's 7.3, both changes" 0 \
	"^ok +kernel package: .* 7.3.4-1~bpo13\+1 .*: has the epoll change and the task-based throttle model"
debian_host 5.10.237-1
expect "a Debian package of another line" 1 \
	"^note +kernel package: linux-image-6.1.0-38-rt-amd64 5.10.237-1: not a version of a Debian kernel line this check knows"
debian_host 6.12.117-1relay linux-image-6.12.117-relay-patched
expect "this project's own package: its version is not Debian's" 1 \
	"^note +kernel package: linux-image-6.12.117-relay-patched 6.12.117-1relay: not a version of a Debian kernel line this check knows"
debian_host - -
expect "a kernel no package owns" 1 "^note +kernel package: no package in dpkg's database owns /boot/vmlinuz-6.1.0-38-rt-amd64"
host "$TEST_TMP/h" 6.1.0-38-rt-amd64 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
out=$("$pf" --root "$TEST_TMP/h" --sample 0 2>&1)
! grep -q "kernel package" <<<"$out" || { echo "$out"; fail "no dpkg database, yet a kernel package line"; }
pass "no dpkg database: no kernel package line"

# The BTF rule, through a stand-in bpftool that prints what the real one
# prints (its raw dump) for a kernel whose ready list is still an rwlock;
# where the unprivileged tools can run it.
chmod 711 "$TEST_TMP"
mkdir -m 755 "$TEST_TMP/bin"
cat >"$TEST_TMP/bin/bpftool" <<'FAKE'
#!/bin/sh
printf "[1] STRUCT 'eventpoll' size=16 vlen=2\n\t'mtx' type_id=3 bits_offset=0\n\t'lock' type_id=2 bits_offset=64\n[2] TYPEDEF 'rwlock_t' type_id=3\n[3] INT 'int' size=4 bits_offset=0 nr_bits=32 encoding=SIGNED\n"
FAKE
chmod 755 "$TEST_TMP/bin/bpftool"
host "$TEST_TMP/h" 6.12.117-relay-patched "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
mkdir -p "$TEST_TMP/h/sys/kernel/btf" && : >"$TEST_TMP/h/sys/kernel/btf/vmlinux"
PATH=$TEST_TMP/bin:$PATH expect "BTF outranks the release name" 1 \
	"^act +epoll ready-list fix: MISSING .*decided from the running kernel's BTF: struct eventpoll's lock is rwlock_t"
# The package says fixed, the kernel's own types say rwlock_t.
debian_host 6.1.187-1
mkdir -p "$TEST_TMP/h/sys/kernel/btf" && : >"$TEST_TMP/h/sys/kernel/btf/vmlinux"
PATH=$TEST_TMP/bin:$PATH expect "BTF and the package disagree" 1 \
	"^act +epoll ready-list fix: MISSING .*decided from the running kernel's BTF" \
	"^warn +kernel package: linux-image-6.1.0-38-rt-amd64 6.1.187-1 .*has the fix.*but the running kernel's BTF says the fix is absent" \
	'what to do: check which kernel booted'

# --btf FILE: the lock type alone, as kernel/build's proof reads it.
btf=$TEST_TMP/h/sys/kernel/btf/vmlinux
got=$(PATH=$TEST_TMP/bin:$PATH "$pf" --btf "$btf") || fail "--btf on an rwlock_t kernel: exit $?"
[ "$got" = rwlock_t ] || fail "--btf printed '$got', expected rwlock_t"
sed -i "s/TYPEDEF 'rwlock_t'/TYPEDEF 'spinlock_t'/" "$TEST_TMP/bin/bpftool"
got=$(PATH=$TEST_TMP/bin:$PATH "$pf" --btf "$btf") || fail "--btf on a spinlock_t kernel: exit $?"
[ "$got" = spinlock_t ] || fail "--btf printed '$got', expected spinlock_t"
sed -i "s/STRUCT 'eventpoll'/STRUCT 'eventpoll_other'/" "$TEST_TMP/bin/bpftool"
err=$(PATH=$TEST_TMP/bin:$PATH "$pf" --btf "$btf" 2>&1); st=$?
{ [ $st = 1 ] && grep -q "no struct eventpoll lock in $btf" <<<"$err"; } || fail "--btf without the struct: exit $st, '$err'"
err=$("$pf" --btf "$TEST_TMP/no-such-vmlinux" 2>&1); st=$?
{ [ $st = 64 ] && grep -q "cannot read $TEST_TMP/no-such-vmlinux" <<<"$err"; } || fail "--btf on a missing file: exit $st, '$err'"
pass "--btf prints the lock type; a file without it exits 1, a missing one 64"

# A kernel package as Debian ships it (kernel_deb in tests/lib.sh):
# --kernel-package reads the lock from its vmlinuz's BTF, --btf from the
# vmlinuz itself.
command -v bpftool >/dev/null || fail "bpftool is needed (mk/deps deploy)"
kernel_deb spinlock_t 6.1.192-3 "$TEST_TMP/k.deb"
dpkg-deb --fsys-tarfile "$TEST_TMP/k.deb" | tar -xO ./boot/vmlinuz-6.1.0-57-rt-amd64 >"$TEST_TMP/vmlinuz"
got=$("$pf" --btf "$TEST_TMP/vmlinuz") || fail "--btf on a compressed image: exit $?"
[ "$got" = spinlock_t ] || fail "--btf on a compressed image printed '$got', expected spinlock_t"
# package_expect RC PATTERN...: --kernel-package on k.deb exits RC and
# prints a line matching each PATTERN.
package_expect() {
	local want=$1 rc=0 out p
	shift
	out=$("$pf" --kernel-package "$TEST_TMP/k.deb" 2>&1) || rc=$?
	[ "$rc" = "$want" ] || { echo "$out"; fail "--kernel-package: exit $rc, expected $want"; }
	for p in "$@"; do
		grep -Eq "$p" <<<"$out" || { echo "$out"; fail "--kernel-package: no line /$p/"; }
	done
}
package_expect 0 "^ok +epoll ready-list fix: present: its vmlinuz's BTF says struct eventpoll's lock is spinlock_t" \
	"^ok +Debian package: linux-image-6.1.0-57-rt-amd64 6.1.192-3: has the fix \(Debian 6.1 from 6.1.159-1\); lacks the follow-up $fu"
kernel_deb rwlock_t 6.1.158-1 "$TEST_TMP/k.deb"
package_expect 1 "^act +epoll ready-list fix: MISSING on a PREEMPT_RT kernel: its vmlinuz's BTF says struct eventpoll's lock is rwlock_t" \
	"^note +Debian package: .* 6.1.158-1: lacks the fix"
pass "a package's vmlinuz: the lock from its BTF (xz inside), and Debian's version table beside it"

# The CFS throttle model beside the lock, from built BTF of each model
# (kernel_btf in tests/lib.sh): --btf-facts, and what a package of each
# pair says for relay's epoll waits.
for model in task cfs_rq none; do
	kernel_btf spinlock_t "$model" "$TEST_TMP/btf.o"
	facts=$("$pf" --btf-facts "$TEST_TMP/btf.o") || fail "--btf-facts on the $model model: exit $?"
	grep -qx "throttle_model $model" <<<"$facts" || { echo "$facts"; fail "--btf-facts: not the $model model"; }
	grep -qx 'eventpoll_lock spinlock_t' <<<"$facts" || { echo "$facts"; fail "--btf-facts: no lock"; }
done
! grep -q '^throttle_markers' <<<"$facts" || fail "the model without CFS bandwidth named markers: $facts"
kernel_btf rwlock_t task "$TEST_TMP/btf.o"
facts=$("$pf" --btf-facts "$TEST_TMP/btf.o")
for want in 'eventpoll_lock rwlock_t' 'throttle_markers task_struct.sched_throttle_work,task_struct.throttle_node,cfs_rq.throttled_limbo_list' \
	'offset eventpoll.lock 40' 'offset eventpoll.rdllist 24' 'offset epitem.ep 40' 'offset eppoll_entry.base 8' \
	'offset eppoll_entry.wait 16' 'probe_ep +40(-8(%di))'; do
	grep -qxF "$want" <<<"$facts" || { echo "$facts"; fail "--btf-facts lacks '$want'"; }
done
pass "--btf-facts: the lock, each throttle model and its markers, the probe's offsets"

# pair_expect LOCK MODEL STATUS PATTERN...: --kernel-package on a package
# whose BTF has LOCK and MODEL.
pair_expect() {
	kernel_deb "$1" 6.1.192-3 "$TEST_TMP/k.deb" "$2"
	shift 2
	package_expect "$@"
}
pair_expect rwlock_t cfs_rq 1 "^act +epoll ready-list fix: MISSING" \
	"^note +CFS throttle model: per cfs_rq \(before v6.18\)" \
	"^warn +for relay's epoll waits: neither change: a reader throttled in ep_poll_callback keeps ep->lock" \
	"what to do: install a kernel that has it: Debian 13: linux-image-6.18.12\+deb13-rt-amd64 or later"
pair_expect rwlock_t task 1 "^act +epoll ready-list fix: MISSING" \
	"^ok +CFS throttle model: task-based .*\(its vmlinuz's BTF: task_struct.sched_throttle_work, task_struct.throttle_node, cfs_rq.throttled_limbo_list\)" \
	"^note +for relay's epoll waits: the throttle change alone: no holder is throttled inside ep_poll_callback.*no priority inheritance"
pair_expect spinlock_t cfs_rq 0 "^ok +epoll ready-list fix: present" \
	"^note +for relay's epoll waits: the epoll change alone: an RT epoll waiter boosts a throttled holder.*a non-RT waker"
pair_expect spinlock_t task 0 "^ok +CFS throttle model: task-based" \
	"^note +for relay's epoll waits: both changes"
pair_expect spinlock_t none 0 "^note +CFS throttle model: no CFS bandwidth control" \
	"^note +for relay's epoll waits: no CPU quota throttles anything here"
pass "a package of each lock and throttle model: what the pair means for relay's epoll waits"

# relay's CPUs: isolated or not, from --cpus or the cpus key of the file.
host "$TEST_TMP/h" 6.18.2 "#1 SMP PREEMPT_RT" --rt --config "$rt_cfg"
echo 2-3 >"$TEST_TMP/h/sys/devices/system/cpu/isolated" 2>/dev/null ||
	{ mkdir -p "$TEST_TMP/h/sys/devices/system/cpu"; echo 2-3 >"$TEST_TMP/h/sys/devices/system/cpu/isolated"; }
PF_ARGS="--cpus 2-3" expect "isolated CPUs" 0 "^ok +relay's CPUs: 2-3 \(from --cpus\) isolated" \
	"^note +busy tasks on relay's CPUs: not watched"
PF_ARGS="--cpus 1-2" expect "a CPU not isolated" 0 "^warn +relay's CPUs: CPU 1 \(of 1-2, from --cpus\) not isolated" \
	'what to do: give relay CPUs of its own.*sched = other'
mkdir -p "$TEST_TMP/h/etc/relay"
printf '[relay]\ncpus = 0,3\n' >"$TEST_TMP/h/etc/relay/relay.conf"
expect "CPUs from relay.conf" 0 "^warn +relay's CPUs: CPU 0 \(of 0,3, from cpus in /etc/relay/relay.conf\) not isolated"

for bad in "--cpus x" "--cpus" "--sample 61" "--sample soon" "--bogus" "--btf"; do
	# shellcheck disable=SC2086
	"$pf" $bad >/dev/null 2>&1; [ $? = 64 ] || fail "'$bad' should exit 64"
done
pass "usage errors"

# A busy task on relay's CPU, on this machine's /proc (the rest of this
# host is checked below): named, with its share.
cpu=$(($(nproc) - 1))
mkdir -p "$TEST_TMP/live"
ln -sfn /proc "$TEST_TMP/live/proc"
taskset -c $cpu nice -n -10 yes >/dev/null &
hog=$!
bg_pids+=("$hog")
out=$("$pf" --root "$TEST_TMP/live" --cpus $cpu --sample 1 2>&1)
kill $hog
grep -Eq "^warn +busy tasks on relay's CPUs: over 1 s: .*yes \(pid $hog, CPU $cpu, [0-9]+ %\)" <<<"$out" ||
	{ echo "$out"; fail "the busy task on CPU $cpu was not named"; }
pass "a busy task on relay's CPU"

# This machine: whatever it finds, every topic gets a line and a summary.
out=$("$pf" 2>&1); st=$?
echo "$out"
[ $st = 0 ] || [ $st = 1 ] || fail "on this machine: exit $st"
for t in PREEMPT_RT "epoll ready-list fix" "RT group scheduling" "cpu controller" summary; do
	grep -q "$t" <<<"$out" || fail "on this machine: no line about $t"
done
# With bpftool and BTF, the fix is read from the kernel's own types.
if command -v bpftool >/dev/null && [ -r /sys/kernel/btf/vmlinux ]; then
	grep -q "decided from the running kernel's BTF: struct eventpoll's lock is" <<<"$out" ||
		fail "bpftool and /sys/kernel/btf/vmlinux are here, but the BTF was not used"
	lock=$("$pf" --btf /sys/kernel/btf/vmlinux) || fail "--btf /sys/kernel/btf/vmlinux: exit $?"
	grep -q "struct eventpoll's lock is $lock" <<<"$out" || fail "--btf says $lock, the check of this kernel does not"
	pass "fix decided from BTF on this machine"
fi
pass "on this machine"
