"""Running a plan: hosts -> transports -> parsers -> sinks (the live store, a recorder, stdout).

No Textual here: the console, the headless runner and the exporter all drive the same engine."""
