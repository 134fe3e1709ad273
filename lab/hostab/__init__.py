"""hostab: make host-ab, the demo's scenario under systemd on a stock and a patched
test host (lab/hostab/run)."""
