# make soak: relay under load for ten minutes with a reload every 30 s,
# judged for loss and for flat memory and descriptors (lab/soak/run;
# SOAK_ARGS: its flags, e.g. "--duration-s 60").
SOAK_ARGS ?=
.PHONY: soak
soak: release
	@mk/deps bench
	@lab/soak/run $(SOAK_ARGS)
