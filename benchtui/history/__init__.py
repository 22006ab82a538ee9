"""History: every session in a catalog, series per step, metric and scope, change points
found by the windowed e-divisive means method, and a gate on sustained changes
(docs/history.md)."""
