# bench/: side-by-side benchmarks against peer tools, run in one go so the
# ratios compare numbers taken on the same machine at the same time.
# Each bench/*.sh prints its own table and writes build/bench/<name>.json.
# make soak (lab/soak) runs on its own.
BENCHES := $(filter-out bench/lib.sh,$(wildcard bench/*.sh))

.PHONY: bench
bench: release
	@mk/deps bench
	@mkdir -p build/bench
	@status=0; for b in $(BENCHES); do \
		echo "== $$b"; $$b || status=1; \
	done; exit $$status
