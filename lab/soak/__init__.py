"""soak: make soak, relay under load for a long time with reloads (lab/soak/run)."""
