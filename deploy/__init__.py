"""deploy: the Python side of relay's deployment (monitor: its Prometheus
rules and dashboard checked against what relay exports)."""
