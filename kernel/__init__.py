"""kernel: the kernel harness's Python (selftests: the summaries of make kernel-selftests)."""
