"""unixwake: the demo's inversion with an AF_UNIX waker, make kernel-unixwake (lab/unixwake/run)."""
