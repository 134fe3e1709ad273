# lab/: the experiments, one folder each (lab/README.md).
#
#   make demo            stock vs patched PREEMPT_RT kernel under QEMU, then the
#                        report (DEMO_ARGS="--duration-s 60 ..." passes flags to
#                        lab/demo/run; DEMO_CLOCK=host boots the guests on the
#                        host clock instead of the virtual one, as a cross-check;
#                        KERNEL_LINE=6.1: the pair of Debian 12's 6.1 RT line;
#                        KERNELS=debian13: Debian 13's signed 6.16.12 against
#                        6.17.13 as shipped, no compiler needed;
#                        STOCK_PACKAGE=A.deb PATCHED_PACKAGE=B.deb: the kernels
#                        of two packages, once the guest can run on them)
#   make demo-runs       make demo DEMO_RUNS (10) times, each run on its own
#                        trajectory, and the table of the runs (lab/demo/repeat)
#   make demo-matrix     make demo on each kernel pair (6.12, 6.1-rt, historical
#                        6.1.8-rt, Debian 13's signed 6.16.12/6.17.13 and
#                        6.18.12/7.3.4, the 7.3 line), one page of them: a row
#                        per kernel, a column per waiter, what each fix
#                        protects (MATRIX_PAIRS=debian13,7.3 picks pairs;
#                        MATRIX_RUNS=3,1 runs each pair 3 times with the AF_UNIX
#                        waker and once with loopback UDP; STOCK_PACKAGE=
#                        PATCHED_PACKAGE= add the pair of those packages)
#   make demo-model      the userspace model of the same locking (lab/model)
#   make capacity        stock vs patched: RT load meeting a latency objective
#   make host-ab         the scenario under systemd on stock and patched test hosts
#   make fleet INVENTORY=FILE   relay and load hosts over SSH with Ansible
#   make soak            relay under load for ten minutes, with reloads (SOAK_ARGS)
#   make kernel-falseneg does epoll_wait(..., 0) miss ready events? (lab/falseneg)
#   make kernel-unixwake the demo's inversion with an AF_UNIX waker (lab/unixwake)
#
# The scenario runner is a C program so that it can go, statically linked,
# into the guest's initramfs next to relay and loadgen (make static).
$(eval $(call program,demo-scenario,lab/demo/scenario))

DEMO_ARGS ?=
DEMO_CLOCK ?= virtual
KERNELS ?=
STOCK_PACKAGE ?=
PATCHED_PACKAGE ?=
.PHONY: demo
demo:
	@mk/deps build report demo
	@lab/demo/run --clock $(DEMO_CLOCK) --kernel-line $(KERNEL_LINE) \
		$(if $(KERNELS),--kernels $(KERNELS)) \
		$(if $(STOCK_PACKAGE),--stock-package $(STOCK_PACKAGE)) \
		$(if $(PATCHED_PACKAGE),--patched-package $(PATCHED_PACKAGE)) $(DEMO_ARGS)

MATRIX_PAIRS ?=
MATRIX_RUNS ?= 1,1
.PHONY: demo-matrix
demo-matrix:
	@mk/deps build report demo
	@lab/demo/matrix --clock $(DEMO_CLOCK) --runs $(MATRIX_RUNS) $(if $(MATRIX_PAIRS),--pairs $(MATRIX_PAIRS)) \
		$(if $(STOCK_PACKAGE),--stock-package $(STOCK_PACKAGE)) \
		$(if $(PATCHED_PACKAGE),--patched-package $(PATCHED_PACKAGE)) $(DEMO_ARGS)

DEMO_RUNS ?= 10
.PHONY: demo-runs
demo-runs:
	@mk/deps build report demo
	@lab/demo/repeat $(DEMO_RUNS) --clock $(DEMO_CLOCK) --kernel-line $(KERNEL_LINE) $(DEMO_ARGS)

include lab/capacity/capacity.mk lab/model/model.mk lab/hostab/hostab.mk \
	lab/fleet/fleet.mk lab/soak/soak.mk lab/falseneg/falseneg.mk lab/unixwake/unixwake.mk

# make names-table: lab/README.md's names table, made from the parameters'
# tables (lab/lab names; tests/integration/lab_names.sh fails when the
# committed one differs).
.PHONY: names-table
names-table: deps
	@lab/lab names --write

# labspec reads a run spec in a guest (lab/spec/main.c); ktrace-drain copies
# the kernel trace's raw pages out of it (lab/ktrace/drain/main.c).
$(eval $(call program,labspec,lab/spec))
$(eval $(call program,ktrace-drain,lab/ktrace/drain))
