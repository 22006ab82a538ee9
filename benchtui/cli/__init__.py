"""The command line: argument parsing, wiring, exit codes. Commands import their modules lazily
so that ``benchtui --version`` stays fast."""
