"""The console when its terminal goes away (SIGHUP: the tmux window or terminal tab
killed, the SSH connection to the controller dropped): nothing is written to it any more,
so that stopping every process benchtui started is not blocked on a dead terminal."""

from __future__ import annotations

import os

from textual.driver import Driver


def write_nowhere(driver: Driver | None) -> None:
    """Give Textual's driver a new output thread writing to ``/dev/null``: the old one may
    have died on the vanished terminal's I/O error already, and then the driver's writes
    (frames, and restoring the terminal as the console exits) fill its queue and block the
    console for ever, before or after the session has stopped its processes."""
    if driver is None or getattr(driver, "_writer_thread", None) is None:
        return
    from textual.drivers._writer_thread import WriterThread

    writer = WriterThread(open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 - the thread owns it
    writer.start()
    setattr(driver, "_writer_thread", writer)  # noqa: B010 - Textual's private attribute
