"""deploy.monitor: relay's /metrics as Prometheus reads it, the rules of
deploy/prometheus run by promtool on recorded scrapes, and the dashboard
of deploy/grafana checked against the series relay exports."""
