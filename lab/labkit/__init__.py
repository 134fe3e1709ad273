"""labkit: what every experiment's driver shares.

run       a results directory per run: its id, the `latest` link, phases
          with progress and an estimate, errors and exit codes
spec      the run spec: every parameter once, with one name and one unit,
          resolved from the command line into spec.json
kernels   where make put the kernel images (kernel/build --print-images)
guest     the initramfs and the QEMU boot of one guest (kernel/vm)
"""
import os

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
