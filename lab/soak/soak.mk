# make soak: relay under load for SOAK_SECONDS with a reload every 30 s,
# judged for loss and for flat memory and descriptors (lab/soak/run).
.PHONY: soak
soak: release
	@mk/deps bench
	@lab/soak/run
