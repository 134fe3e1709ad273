"""lab/hostab/params and units: the host A/B runs demo-scenario's table,
every row at its virtual clock's default, and every row reaches the test
host (a file of its scenario, or the spec the guest hands to
demo-scenario --watch); the systemd translations of the quota."""
import json
import os
import subprocess
import tempfile
import unittest

from lab.hostab import params, units
from lab.labkit import spec

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def default_spec(**scenario):
    sc = {p.name: p.default for p in params.SCENARIO}
    sc.update(scenario)
    return {"run_id": "r", "salt_us": 123, "trace": "on", "scenario": sc}


class TableTest(unittest.TestCase):
    def test_every_row_of_demo_scenario_s_table(self):
        self.assertEqual(list(params.NAMES), list(spec.described("demo-scenario")))

    def test_the_virtual_clock_s_defaults_and_ranges(self):
        rows = spec.described("demo-scenario")
        for p in params.SCENARIO:
            row = rows[p.name]
            self.assertEqual(p.default, row["default"]["virtual"], p.name)
            self.assertEqual((p.kind, p.unit, p.help), (row["type"], row["unit"], row["help"]), p.name)
            narrower = params.NARROWER.get(p.name, {})
            self.assertEqual((p.lo, p.hi), (narrower.get("lo", row["min"]), narrower.get("hi", row["max"])))
            self.assertTrue(row["min"] <= p.lo <= p.default <= p.hi <= row["max"], p.name)


class UnitsTest(unittest.TestCase):
    def test_every_parameter_reaches_the_test_host(self):
        base = units.files(default_spec())
        for p in params.SCENARIO:
            other = p.default + 1 if p.default + 1 <= p.hi else p.default - 1
            if p.name == "ticker_cpu":
                other = -1      # the relay's CPU: 1
            changed = units.files(default_spec(**{p.name: other})) != base
            self.assertNotEqual(changed, p.name in units.BY_SPEC,
                                f"{p.name}: {'in BY_SPEC and in a file' if changed else 'reaches no file'}")

    def test_the_quota_as_systemd_takes_it(self):
        f = units.files(default_spec())
        self.assertIn("[Slice]\nCPUQuota=5%\nCPUQuotaPeriodSec=20ms\n", f["slice.conf"][1])
        self.assertIn("CPU_MAX='1000 20000'\n", f["scenario.env"][1])
        self.assertEqual(f["slice.conf"][0], "/etc/systemd/system/loadgen.slice.d/scenario.conf")
        f = units.files(default_spec(cpu_quota_pct=33, period_us=1050))
        self.assertIn("CPUQuotaPeriodSec=1050us\n", f["slice.conf"][1])
        self.assertIn("CPU_MAX='347 1050'\n", f["scenario.env"][1])     # 346.5 rounds up, as cg_quota_us

    def test_the_wakers_and_the_rt_client(self):
        f = units.files(default_spec())
        self.assertIn("--target unix:///run/relay/relay.sock --rate 30000 --threads 2 ",
                      f["cotenant.conf"][1])
        self.assertIn("net.unix.max_dgram_qlen = 4096\n", f["sysctl.conf"][1])
        rt = f[units.RT_UNIT][1]
        for want in ("CPUSchedulingPolicy=fifo\n", "CPUSchedulingPriority=40\n", "CPUAffinity=0\n",
                     "--target udp://127.0.0.1:7700 --rate 100 --duration 17 --timeout 1200 --spin-us 200 "
                     "--list-over-us 150 "):
            self.assertIn(want, rt)
        f = units.files(default_spec(af_unix=0, ticker_us=3000, ticker_cpu=-1))
        self.assertIn("--target udp://127.0.0.1:7700 --rate 30000 ", f["cotenant.conf"][1])
        self.assertNotIn("max_dgram_qlen", f["sysctl.conf"][1])
        self.assertIn("--rate 333.333 ", f[units.RT_UNIT][1])
        self.assertIn("CPUAffinity=1\n", f[units.RT_UNIT][1])
        self.assertIn("SALT_US=123\nTRACE=on\n", f["scenario.env"][1])

    def test_the_shipped_relay_conf_s_listeners(self):
        conf = units.files(default_spec())["relay.conf"][1]
        with open(os.path.join(TOP, "deploy", "relay.conf"), encoding="utf-8") as f:
            shipped = f.read()
        for line in ("listen = unix:///run/relay/relay.sock", "unix_mode = 0660", "upstream = echo"):
            self.assertIn(line + "\n", shipped)
            self.assertIn(line + "\n", conf)

    def test_the_command_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "spec.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(default_spec(), f)

            def run(*a):
                return subprocess.run([os.path.join(TOP, "mk", "py"), "lab.hostab.units", *a],
                                      capture_output=True, text=True)
            p = run(path, os.path.join(d, "out"))
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(os.path.join(d, "out", "install.txt"), encoding="utf-8") as f:
                lines = f.read().splitlines()
            self.assertIn("relay.conf /etc/relay/relay.conf", lines)
            self.assertTrue(all(os.path.exists(os.path.join(d, "out", x.split()[0])) for x in lines))
            # an existing file is not written through
            self.assertEqual(run(path, os.path.join(d, "out")).returncode, 73)
            self.assertEqual(run(os.path.join(d, "none.json"), os.path.join(d, "o2")).returncode, 66)
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"scenario": {"cpu": 1}}, f)
            p = run(path, os.path.join(d, "o3"))
            self.assertEqual(p.returncode, 65)
            self.assertIn("scenario.duration_s: expected a whole number", p.stderr)


if __name__ == "__main__":
    unittest.main()
