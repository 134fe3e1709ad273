# tests/: unit test programs, one per tests/unit/test_*.c, linked against
# every component archive and lib/.
UNIT_TESTS := $(patsubst tests/unit/%.c,$(O)/tests/%,$(wildcard tests/unit/test_*.c))

$(O)/tests/%: tests/unit/%.c $(PROGRAM_ARCHIVES) $(LIB_A)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(LDFLAGS) -MMD -MP -o $@ $< \
		$(PROGRAM_ARCHIVES) $(LIB_A) $(LDLIBS)

.PHONY: unit-tests
unit-tests: $(UNIT_TESTS)

# Everything any test needs, installed up front so a fresh machine needs no
# other step (each test that needs a group also asks for it itself).
TEST_DEPS := build test kernel report demo deploy tcp fleet

test:
	@mk/deps $(TEST_DEPS)
	@tests/run $(T)

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
