"""tests/integration/relay_listener_stats.sh's check of /stats and the stats file.

  listener_stats.py FILE before|after PA PB PT UA UB TUP
      the counts per listener and upstream in the JSON FILE, before or after
      the reload that removes the [::1]:PB listener and moves the upstream
      from 127.0.0.1:UA to 127.0.0.1:UB: udp://127.0.0.1:PA 30 datagrams of
      16 bytes (5 more after), udp://[::1]:PB 50 of 20, tcp://127.0.0.1:PT
      one connection of 100 bytes to the echo upstream tcp://127.0.0.1:TUP.
"""
import json
import sys


def check(d, phase, pA, pB, pT, ua, ub, tup):
    """Every assertion on the stats D (a dict) in PHASE ("before", "after")."""
    L, U = d["listeners"], d["upstreams"]
    a = L["udp://127.0.0.1:" + pA]
    t = L["tcp://127.0.0.1:" + pT]
    ua, ub = U["udp://127.0.0.1:" + ua], U.get("udp://127.0.0.1:" + ub)
    extra = 5 if phase == "after" else 0
    want_a = {"id": 0, "rx_packets": 30 + extra, "rx_bytes": 16 * (30 + extra),
              "reply_tx_packets": 30 + extra, "reply_tx_bytes": 19 * (30 + extra),
              "flows_created": 1 + (extra > 0)}
    assert {k: a[k] for k in want_a} == want_a, a
    assert set(a["drops"]) == set(d["drops"]) and not any(a["drops"].values()), a
    assert ua["tx_packets"] == 80 and ua["reply_packets"] == 80 and ua["tx_bytes"] == 1480, ua
    assert ua["drops"] == {"upstream_refused": 0, "upstream_error": 0}, ua
    assert t["id"] == 2 and t["accepted"] == 1 and t["rx_bytes"] == 100, t
    assert t["tx_bytes"] == 100 and t["closed"]["done"] == 1, t
    assert U["tcp://127.0.0.1:" + tup]["connected"] == 1, U
    b = L.get("udp://[::1]:" + pB)
    if phase == "before":
        assert b["id"] == 1 and b["rx_packets"] == 50 and b["reply_tx_bytes"] == 1150, b
        assert b["flows_active"] == 1, b
        assert ub is None, U
    else:
        assert b is None, L                 # removed with its listener
        assert ub["tx_packets"] == 5 and ub["reply_packets"] == 5, ub
        assert d["counters"]["rx_packets"] == 85, d["counters"]


if __name__ == "__main__":
    if len(sys.argv) != 9 or sys.argv[2] not in ("before", "after"):
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        check(json.load(f), *sys.argv[2:])
