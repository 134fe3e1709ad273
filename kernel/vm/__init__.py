"""vm: the guest harness's Python (unpack: a guest's results archive, taken as data)."""
