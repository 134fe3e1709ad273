# kernel/: the stock and patched Debian kernels, the QEMU harness and the
# epoll selftests and benchmarks that gate them. See kernel/README.md.
#
#   make kernels            build (or take from the cache) stock + patched 6.12
#                           (KERNEL_LINE=6.1: the other line; 7.3: Debian 13's
#                           linux-source-7.3 with ep->lock an rwlock again,
#                           against it as shipped; kernel/build
#                           --line L --print-images says where they are)
#   make kernel-debs        the same two kernels as Debian packages that boot a
#                           systemd host (KCONFIG=FILE: start from a host's
#                           /boot/config-* instead of tinyconfig); prints the
#                           path of each package, one per line
#   make kernel-6.1         the same for the 6.1 line (PREEMPT_RT with Debian's
#                           RT patches; KERNEL_LINE=6.1.8-rt: the historical
#                           6.1.8-1 kernel as Debian shipped it, one image)
#   make kernel-selftests   boot both 6.12 kernels, run the epoll selftests and
#                           benchmarks (KERNEL_LINE=6.1 for the other line)
#   make kernel-followup    evaluate the ep_poll_callback wakeup follow-up patch
#   make kernel-falseneg, make kernel-unixwake: experiments on these
#                           kernels, in lab/falseneg/ and lab/unixwake/

KERNEL_LINE ?= 6.12

# vm-clock goes, statically linked, into the guest that checks the virtual
# clock (tests/vm/vm_clock.sh).
$(eval $(call program,vm-clock,kernel/vm/clock))

.PHONY: kernels kernel-debs kernel-6.1 kernel-selftests kernel-followup
kernels:
	@mk/deps kernel
	@kernel/build --line $(KERNEL_LINE)

kernel-debs:
	@mk/deps kernel deploy
	@kernel/build --line 6.12 --host $(if $(KCONFIG),--base-config $(KCONFIG))

# make test-images' steps (tests/step): the two kernels, recorded.
.PHONY: image-kernels image-kernel-debs
image-kernels:
	@tests/step --long build/kernels $(MAKE) --no-print-directory kernels
image-kernel-debs:
	@tests/step --long build/kernel-debs $(MAKE) --no-print-directory kernel-debs

kernel-6.1:
	@mk/deps kernel
	@kernel/build --line 6.1

kernel-selftests:
	@mk/deps kernel
	@kernel/selftests/run --line $(KERNEL_LINE)

kernel-followup:
	@mk/deps kernel
	@kernel/selftests/followup
