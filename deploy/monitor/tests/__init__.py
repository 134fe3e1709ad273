"""deploy.monitor's unit tests."""
