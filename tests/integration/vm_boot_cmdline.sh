#!/usr/bin/env bash
# kernel/vm/boot reads the release from a bzImage's header and, on the
# virtual clock only, boots a kernel before 6.5 with maxcpus=1 (vm-setup
# then brings the other CPUs online): their boot-time CPU bring-up stalls
# the emulator. Checked on headers made here, with --print-cmdline.
# timeout: 30
# variants: release
# check: fast
. "$(dirname "$0")/../lib.sh"
boot=$top/kernel/vm/boot
cd "$TEST_TMP" || exit 1

# bzimage FILE RELEASE: a 4 KiB file with the x86 boot protocol's header
# magic and a kernel_version string (its offset 0x400 at 0x20e, from 0x200).
bzimage() {
	head -c 4096 /dev/zero >"$1"
	printf HdrS | dd of="$1" bs=1 seek=514 conv=notrunc status=none
	printf '\000\004' | dd of="$1" bs=1 seek=526 conv=notrunc status=none
	printf '%s (relay@relay) #1 SMP PREEMPT_RT' "$2" | dd of="$1" bs=1 seek=1536 conv=notrunc status=none
}
: >initrd
# cmdline FILE [ARG]...: the command line boot would give FILE
cmdline() {
	local k=$1
	shift
	"$boot" --kernel "$k" --initrd initrd --out out --print-cmdline "$@" || fail "boot --print-cmdline $k $*: exit $?"
}
# expect RELEASE WANT [ARG]...: maxcpus=1 is on the command line (WANT=yes) or not
expect() {
	local rel=$1 want=$2 got=no line
	shift 2
	bzimage "k-$rel" "$rel"
	line=$(cmdline "k-$rel" "$@")
	case " $line " in *" maxcpus=1 "*) got=yes ;; esac
	[ "$got" = "$want" ] || fail "$rel $*: maxcpus=1 $got, expected $want: $line"
}
expect 6.1.187-rt64-relay-stock yes
expect 6.1.8-rt5-relay-historical yes
expect 6.4.16 yes
expect 5.10.0-30-rt-amd64 yes
expect 6.5.0 no
expect 6.12.117-relay-stock no
expect 7.0.1 no
expect 6.1.187-rt64-relay-stock no --clock host --tsc-khz 3000000
pass "maxcpus=1 for releases before 6.5, on the virtual clock only"

line=$(cmdline k-6.1.187-rt64-relay-stock --append 'lpj=1000000 quiet')
case $line in *" maxcpus=1 lpj=1000000 quiet") ;; *) fail "--append lost or misplaced: $line" ;; esac
pass "--append follows maxcpus=1"

head -c 4096 /dev/urandom >random.bin
line=$(cmdline random.bin)
case " $line " in *" maxcpus=1 "*) fail "a file with no header got maxcpus=1: $line" ;; esac
[ ! -e out ] || fail "--print-cmdline created its --out directory"
pass "no header, no release: booted as it is"
