"""demo: make demo, its matrix and its repeats (lab/demo/README.md)."""
