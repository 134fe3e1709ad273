"""deploy/hostimg/vcpus.py on QEMU 7.2's own monitor output (a patched
test host's 'info registers -a' and 'x /8gx'), and a System.map cut to a
few of the 6.12 host kernel's symbols."""
import os
import unittest

from deploy.hostimg import vcpus

FIX = os.path.join(os.path.dirname(__file__), "../../../tests/fixtures/hostimg")


def fixture(name):
    with open(os.path.join(FIX, name), encoding="utf-8") as f:
        return f.read()


class VcpusTest(unittest.TestCase):
    def setUp(self):
        self.smap = vcpus.SystemMap(fixture("System.map"))

    def test_registers_of_each_cpu(self):
        r = vcpus.registers(fixture("info-registers.txt"))
        self.assertEqual(sorted(r), [0, 1])
        self.assertEqual((r[0]["cpl"], r[0]["halted"], r[0]["rip"]), (3, False, 0x7f5c24780f52))
        self.assertEqual((r[1]["cpl"], r[1]["halted"]), (0, True))
        self.assertTrue(r[1]["rflags"] & vcpus.RFLAGS_IF)
        self.assertEqual(self.smap.name(r[1]["rip"]), "default_idle+0x13")

    def test_names_only_the_kernel_text(self):
        self.assertEqual(self.smap.name(0xffffffff81076961), "do_idle+0x0")
        self.assertIsNone(self.smap.name(0x7f5c24780f52))          # user space
        self.assertIsNone(self.smap.name(0xffffffff81e081c0))      # jiffies_64: data
        self.assertIsNone(self.smap.name(0xffffffff80000010))      # before _stext

    def test_words_of_a_memory_dump(self):
        self.assertEqual(len(vcpus.words(fixture("x-stack.txt"))), 8)
        got = [self.smap.name(w) for w in vcpus.words(fixture("x-kernel-stack.txt"))]
        self.assertEqual(got, ["do_idle+0x0", None, None, "default_idle_call+0x43"])

    def test_a_map_without_text_is_refused(self):
        with self.assertRaises(ValueError):
            vcpus.SystemMap("ffffffff81e081c0 D jiffies_64\n")


if __name__ == "__main__":
    unittest.main()
