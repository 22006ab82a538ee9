"""The signals that stop a session the way Ctrl-C does.

SIGINT (Ctrl-C) and SIGTERM (``kill``), and SIGHUP: the terminal closed (a tmux window or a
terminal tab killed, the SSH connection to the controller dropped). Without a handler SIGHUP
ends the process at once, and every process benchtui started on every host would run on until
its deadline on the host. A run started under ``nohup`` (SIGHUP ignored) keeps ignoring it:
that user asked for the run to outlive the terminal.
"""

from __future__ import annotations

import os
import signal
import stat


def stop_signals() -> tuple[signal.Signals, ...]:
    """The signals to handle as an interrupt, in this process as it was started."""
    found = [signal.SIGINT, signal.SIGTERM]
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is not None and signal.getsignal(hangup) is not signal.SIG_IGN:
        found.append(hangup)
    return tuple(found)


def detach_from_terminal() -> None:
    """After SIGHUP: point whichever of standard input, output and error was the terminal at
    ``/dev/null``, so that what still uses the terminal that went away (the console restoring
    it as it exits, its input thread, progress lines) neither fails nor blocks while the session
    stops its processes: reads see the end of input, writes succeed. Redirected streams
    (``--jsonl > samples.jsonl``) are left as they are."""
    ttys = [fd for fd in (0, 1, 2) if _is_tty(fd)]
    if not ttys:
        return
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for fd in ttys:
            os.dup2(null, fd)
    finally:
        os.close(null)


def is_hangup(sig: int) -> bool:
    return sig == getattr(signal, "SIGHUP", None)


def _is_tty(fd: int) -> bool:
    # After a hangup the terminal answers no terminal request (isatty() says False): a
    # character device is what a terminal still is (or /dev/null, just as well replaced).
    try:
        return stat.S_ISCHR(os.fstat(fd).st_mode)
    except OSError:
        return False
