# make capacity: what the fix buys in RT load rate at a latency objective,
# stock vs patched in the VM (kernel/vm/capacity/run; report/README.md).
#
#   make capacity                          the default grid
#   make capacity CAPACITY_ARGS=--quick    the small grid of the test
#   make capacity CAPACITY_ARGS="--slo p99.9=500us --quotas 10,50"
CAPACITY_ARGS ?=
.PHONY: capacity
capacity:
	@mk/deps build report demo
	@kernel/vm/capacity/run $(CAPACITY_ARGS)
