"""The heartbeat process (``heartbeats``): ``python -m benchtui.transport.beat_process STALL``.

Its standard input is a pipe from its controller, one JSON object a line:

- ``{"op": "watch", "name": ..., "target": {SshTarget's fields}, "runs_dir": ...,
  "session_id": ..., "window": ...}``: connect to the host and feed its keeper
  (``watchdog.KEEPER``) one line a second (``ssh.feed_keeper``; one ``BeatClock`` beats
  every host in the same wake-up), reconnecting within
  ``window`` seconds of a loss; a host it cannot connect to at first, or gives up, is
  said on standard output (``lost NAME REASON``): its controller beats it itself;
- ``{"op": "unwatch", "name": ...}``: close that host's connection (its keeper writes
  "closed");
- ``{"op": "tick"}``: the controller's event loop turns. Beats are written only while the
  last tick is less than STALL seconds old. Each tick is answered with a byte on standard
  output (the controller takes a process that stops answering for stuck).

When the pipe ends (the controller's process is gone, however it went), every connection is
closed and the process exits. It ignores the signals a terminal or a service manager sends
its whole process group (SIGINT, SIGTERM, SIGHUP, SIGQUIT): its controller decides when it
ends, by closing the pipe, or by dying. SIGTSTP (Ctrl-Z) stops it with its controller.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable

from benchtui.errors import HostError
from benchtui.transport import hostscripts
from benchtui.transport.beat_clock import BeatClock
from benchtui.transport.heartbeats import STALL_LIMIT
from benchtui.transport.ssh import feed_keeper
from benchtui.transport.ssh_link import SshLink
from benchtui.transport.sshtarget import SshTarget
from benchtui.transport.watchdog import keeper_argv


class Keeper:
    """One watched host: its connection and the task that feeds its keeper."""

    def __init__(self, message: dict[str, object], beating: Callable[[], bool],
                 say: Callable[[str], None], clock: BeatClock) -> None:
        target = message["target"]
        assert isinstance(target, dict)
        self.name = str(message["name"])
        self.link = SshLink(self.name, SshTarget(**target), window=float(str(message["window"])))
        self.line = hostscripts.shell_line(keeper_argv(str(message["runs_dir"]),
                                                       str(message["session_id"]), self.name))
        self.task = asyncio.get_running_loop().create_task(self._keep(beating, say, clock))

    async def _keep(self, beating: Callable[[], bool], say: Callable[[str], None],
                    clock: BeatClock) -> None:
        try:
            await self.link.connect()
            await feed_keeper(self.link, self.line, beating, clock)
        except HostError as exc:
            say(f"lost {self.name} {exc}")
            return
        if self.link.given_up is not None:
            say(f"lost {self.name} {self.link.given_up}")

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self.link.close()


async def serve(stall_limit: float) -> None:
    """Keep the hosts' keepers fed as the controller says, until its pipe ends."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    last_tick = time.monotonic()
    answers = sys.stdout.fileno()
    os.set_blocking(answers, False)

    def say(data: bytes) -> None:
        with contextlib.suppress(BlockingIOError):  # (a controller not reading)
            os.write(answers, data)

    def beating() -> bool:
        return time.monotonic() - last_tick < stall_limit

    keepers: dict[str, Keeper] = {}
    clock = BeatClock()
    try:
        while line := await reader.readline():
            try:
                message = json.loads(line)
                op = message["op"]
            except (ValueError, KeyError, TypeError):
                continue
            if op == "tick":
                last_tick = time.monotonic()
                say(b".")
            elif op == "watch" and message.get("name") not in keepers:
                keeper = Keeper(message, beating,
                                lambda text: say(f"\n{' '.join(text.split())}\n".encode()),
                                clock)
                keepers[keeper.name] = keeper
            elif op == "unwatch" and (gone := keepers.pop(message.get("name"), None)):
                await gone.close()
    finally:
        await asyncio.gather(*(k.close() for k in keepers.values()), return_exceptions=True)
        await clock.close()


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    logging.disable(logging.CRITICAL)  # (asyncssh's log has no reader here)
    stall_limit = float(sys.argv[1]) if len(sys.argv) > 1 else STALL_LIMIT
    asyncio.run(serve(stall_limit))
    return 0


if __name__ == "__main__":
    sys.exit(main())
