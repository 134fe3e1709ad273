"""ktrace: the kernel trace of a demo guest, and the chains that explain its stalls."""
