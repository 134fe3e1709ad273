"""selftests: the epoll selftests' and cost benchmarks' summaries (kernel/selftests/run, followup)."""
