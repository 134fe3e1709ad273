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
