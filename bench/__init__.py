"""bench: the benchmarks' summaries (bench/*.sh)."""
