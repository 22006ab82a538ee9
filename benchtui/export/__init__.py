"""Getting samples out: text formats (JSON Lines, CSV, OpenMetrics) and the Prometheus exporter."""
