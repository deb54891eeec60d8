"""Operating mnemogate: Prometheus metrics, the health endpoint, JSON logs, the status view."""
