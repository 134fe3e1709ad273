# tests/: unit test programs, one per tests/unit/test_*.c, linked against
# every component archive and lib/.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(wildcard tests/unit/test_*.c))

$(O)/tests/%: tests/unit/%.c $(PROGRAM_ARCHIVES) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< \
		$(PROGRAM_ARCHIVES) $(LIB_A) $(LDLIBS)

.PHONY: unit-tests
unit-tests: $(UNIT_TESTS)

# make test: install everything any test needs (so a fresh machine needs no
# other step; each test that needs a group also asks for it itself), build
# every variant, the images the chosen VM tests boot and make lint, then
# tests/run the tests (T=PATTERN...: only those). make check, the fast
# lane: the release and ASan builds, make lint, the unit tests and the
# integration tests marked "# check: fast" (tests/run --fast).
#
# Each of those steps goes through tests/step, which records its outcome
# and times in $(TEST_STEPS); a failed step does not stop the others nor
# the tests (the tests that need what it made fail on their own):
# tests/run --steps counts it among the failures and prints its log's end.
TEST_DEPS := build test kernel report demo deploy tcp fleet
CHECK_DEPS := build test report tcp
TEST_STEPS := build/steps/steps.tsv
# Sub-makes use every core unless make was given -j (then they share its).
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc))

.PHONY: test check test-matrix test-build check-build test-images test-lint \
	$(addprefix test-build-,release asan static)
test:
	@rm -f $(TEST_STEPS)
	-@tests/step deps mk/deps $(TEST_DEPS)
	-@$(MAKE) --no-print-directory $(TEST_JOBS) -k test-build test-lint
	-@$(MAKE) --no-print-directory test-images
	@tests/run --steps $(TEST_STEPS) $(T)

check:
	@rm -f $(TEST_STEPS)
	-@tests/step deps mk/deps $(CHECK_DEPS)
	-@$(MAKE) --no-print-directory $(TEST_JOBS) -k check-build test-lint
	@tests/run --steps $(TEST_STEPS) --fast

# make test-matrix: on request only, the demo on every kernel pair with
# each waker, with assertions (tests/request/demo_matrix.sh; about 40
# minutes with the kernels cached, an hour more on a fresh machine).
test-matrix:
	@rm -f $(TEST_STEPS)
	-@tests/step deps mk/deps $(TEST_DEPS)
	-@$(MAKE) --no-print-directory $(TEST_JOBS) -k test-build-release test-build-static
	@tests/run --steps $(TEST_STEPS) --on-request request/demo_matrix

# What the tests run: release and ASan programs and unit tests (check-build),
# and the static programs for the VM initramfs.
test-build-release test-build-asan: test-build-%: deps
	@tests/step build/$* $(MAKE) --no-print-directory $(TEST_JOBS) VARIANT=$* bins unit-tests
test-build-static: deps
	@tests/step build/static $(MAKE) --no-print-directory $(TEST_JOBS) VARIANT=static bins
check-build: test-build-release test-build-asan
test-build: check-build test-build-static

test-lint:
	@tests/step lint $(MAKE) --no-print-directory lint

# The images the chosen VM tests boot (their "# needs:" lines, which
# tests/run --needs reads), one at a time: on a fresh machine each keeps
# every core busy for up to half an hour (their progress is shown each
# minute), from the cache they take seconds. The image-* targets are the
# kernel's and deploy's.
test-images:
	@needs=$$(tests/run --needs $(T)) || exit; \
	if [ -n "$$needs" ] && [ "$$(id -u)" != 0 ]; then \
		echo "(not root: the VM tests skip, so their images are not built)"; exit 0; \
	fi; \
	st=0; for i in $$needs; do $(MAKE) --no-print-directory image-$$i || st=1; done; exit $$st

# tests/fuzz/: libFuzzer targets, one per tests/fuzz/fuzz_*.c, built with
# VARIANT=fuzz and linked against the archives of the code each one feeds.
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(O)/tests/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
SERVER_FUZZ := $(addprefix $(O)/tests/fuzz/fuzz_,admin conf flow tcp tls)
$(SERVER_FUZZ): $(O)/server/librelay.a
$(SERVER_FUZZ): CPPFLAGS += -Iserver
$(O)/tests/fuzz/fuzz_merge $(O)/tests/fuzz/fuzz_opts $(O)/tests/fuzz/fuzz_wire: $(O)/loadgen/libloadgen.a

$(O)/tests/fuzz/%: tests/fuzz/%.c $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< \
		$(filter-out $(LIB_A),$(filter %.a,$^)) $(LIB_A) $(LDLIBS)

.PHONY: fuzz-targets
fuzz-targets: $(FUZZ_TARGETS)

# Hunting bugs: every target (or FUZZ=NAME...) for FUZZ_SECONDS each, the
# corpus and any crash kept in build/fuzz/runs/.
FUZZ_SECONDS ?= 600
fuzz:
	@mk/deps test
	@tests/fuzz/run --seconds $(FUZZ_SECONDS) $(FUZZ)
