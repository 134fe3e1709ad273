"""hostab: make host-ab, the scenario under systemd on a stock and a patched test host (lab/hostab/run)."""
