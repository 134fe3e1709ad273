"""lab: the experiments, one package each (lab/README.md), on the shared
driver library (labkit) and the kernel trace (ktrace)."""
