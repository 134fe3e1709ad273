# make capacity: what the fix buys in RT load rate at a latency objective,
# stock vs patched in the VM (lab/capacity/run; report/README.md).
#
#   make capacity                          the default plan
#   make capacity CAPACITY_ARGS=--quick    the small plan of the test
#   make capacity CAPACITY_ARGS="--slo p99.9=500us --cpu-quota-pct 10,50"
#   make test-capacity                     the quick plan's test alone (make test runs it too)
CAPACITY_ARGS ?=
.PHONY: capacity test-capacity
capacity:
	@mk/deps build report demo
	@lab/capacity/run $(CAPACITY_ARGS)

test-capacity:
	@$(MAKE) --no-print-directory test T=capacity/capacity_
