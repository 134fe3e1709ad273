# report/ and the demo.
#
#   make demo            stock vs patched PREEMPT_RT kernel under QEMU, then the
#                        report (DEMO_ARGS="--duration 60 ..." passes flags to
#                        kernel/vm/demo/run; see kernel/vm/demo/README.md;
#                        DEMO_CLOCK=host boots the guests on the host clock
#                        instead of the virtual one, as a cross-check)
#
# The scenario runner is a C program so that it can go, statically linked,
# into the guest's initramfs next to relay and loadgen (make static).
$(eval $(call program,demo-scenario,kernel/vm/demo))
# It reads the relay's heartbeat file (server/heartbeat.h).
$(O)/kernel/vm/demo/%.o: CPPFLAGS += -I.

DEMO_ARGS ?=
DEMO_CLOCK ?= virtual
.PHONY: demo report-deps
demo:
	@mk/deps build report demo
	@kernel/vm/demo/run --clock $(DEMO_CLOCK) $(DEMO_ARGS)

# The report tests render pages and look at them in headless Chromium.
report-deps:
	@mk/deps report
test: report-deps
