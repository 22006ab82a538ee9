"""``--skip SECONDS``, the ramp-up left out at the start of each run, as every command that
takes it reads it (report, replay, history import): a duration (``5``, ``30s``, ``2m``) of at
most a week, or one sentence from argparse."""

from __future__ import annotations

import argparse

from benchtui.model.units import parse_duration

#: The longest ramp-up ``--skip`` takes: a week, longer than any run a skip is meant for.
MAX_SKIP = 7 * 86400.0


def skip_seconds(text: str) -> float:
    """``text`` as seconds of ramp-up; argparse's error for what is not one."""
    value = parse_duration(text.strip())
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (e.g. 5, 10s, 1m)")
    if value > MAX_SKIP:
        raise argparse.ArgumentTypeError(
            f"{text!r} is more than the 7 days (604800 s) a ramp-up can be: give the seconds "
            "left out at the start of each run (e.g. 5, 30s, 2m)")
    return value
