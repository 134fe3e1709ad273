"""lab/demo's unit tests; SUMMARY: a demo's summary.json as they make it up."""
SUMMARY = {"initramfs_sha256": "8e4772c9aa", "verdict": "fixed",
           "stock": {"stalls": 7, "rt_late": 147, "rt_samples": 1360,
                     "rt_latency_us": {"p99_9": 215000, "max": 216000},
                     "why": {"totals": {"stalls_explained": 7}, "trace": {"lost": {"total": 0}},
                             "contentions": {"boosts": 0, "rt_waits": 3}}},
           "patched": {"stalls": 0, "rt_latency_us": {"p99_9": 95, "max": 600},
                       "why": {"totals": {"stalls_explained": 0}, "trace": {"lost": {"total": 2}},
                               "contentions": {"boosts": 37375, "rt_waits": 37375}}}}
