# make host-ab: the demo's scenario under systemd's units on a stock and a
# patched test host (lab/hostab/run; HOST_AB_ARGS: its flags).
HOST_AB_ARGS ?=
.PHONY: host-ab
host-ab: release
	@mk/deps build kernel deploy report
	@lab/hostab/run $(HOST_AB_ARGS)
