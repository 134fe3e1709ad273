"""Latency objectives as a loadgen sweep's JSON states them ({"p99_9":
1000}, microseconds), in words."""


def slo_label(name):
    """"p99_9" -> "p99.9"."""
    return name.replace("_", ".")


def fmt_us(us):
    """850 us, 2.6 ms, 1.2 s: three significant digits."""
    if us is None:
        return "-"
    if us < 1000:
        return f"{us:.0f} us"
    if us < 1000000:
        return f"{us / 1e3:.3g} ms"
    return f"{us / 1e6:.3g} s"


def objectives(slo):
    """"p99.9 <= 1 ms, p99 <= 500 us" for an slo object."""
    return ", ".join(f"{slo_label(k)} <= {fmt_us(v)}" for k, v in slo.items())
