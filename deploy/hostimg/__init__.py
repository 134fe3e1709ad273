"""deploy/hostimg: the test host image, its boot, its checks, and what a hung one shows."""
