# bench/: side-by-side benchmarks against peer tools, run in one go so the
# ratios compare numbers taken on the same machine at the same time.
# Each bench/*.sh prints its own table and writes build/bench/<name>.json.
# make soak (bench/soak.sh) runs on its own: ten minutes of load and
# reloads, judged for loss and for flat memory and descriptors; its files
# go to results/<id>-soak/.
BENCHES := $(filter-out bench/lib.sh bench/soak.sh,$(wildcard bench/*.sh))

.PHONY: bench soak
bench: release
	@mk/deps bench
	@mkdir -p build/bench
	@status=0; for b in $(BENCHES); do \
		echo "== $$b"; $$b || status=1; \
	done; exit $$status

soak: release
	@mk/deps bench
	@bench/soak.sh
