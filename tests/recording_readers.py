"""A session file read every way a user reads one (``test_recording_fuzz.py``): ``info``,
``info --verify --json``, ``dump --histograms``, ``report``, ``history import`` (the CLI's
``main``, in this process, as the commands' own tests run it) and replay's player (what
``benchtui replay`` drives, without a screen).

Run as a program (``python -m tests.recording_readers FILE...``) it reads each file every way
and prints, as one JSON document, each file's exit statuses (or its traceback) and the
process's peak memory (``VmHWM``): the fuzz test runs its zstd bombs that way, in a child
under an address-space limit.
"""

from __future__ import annotations

import io
import json
import sys
import traceback
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from benchtui.cli.main import main
from benchtui.errors import RecordingError
from benchtui.session.replay import ReplayPlayer
from benchtui.store.recording import SessionReader


def command(argv: list[str]) -> tuple[int, str, str]:
    """Exit status, standard output and standard error of ``benchtui ARGV``."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def replay(path: str) -> None:
    """What ``benchtui replay`` does with the file, without a screen: open, play to the
    end, seek back and forth, step through the events."""
    try:
        reader = SessionReader.open(path)
    except RecordingError:
        return
    with reader:
        player = ReplayPlayer(reader)
        player.timeline()
        player.play()
        player.advance(max(player.duration, 1.0) + 1.0)
        player.finish_work()
        for fraction in (0.5, 0.1, 0.9):
            player.seek_fraction(fraction)
            player.finish_work()
        while player.next_event() is not None:
            pass


def read_every_way(path: Path) -> dict[str, object]:
    """Each command's exit status on ``path``, ``info --verify``'s standard error and JSON
    document; a traceback is raised as it is."""
    p = str(path)
    out: dict[str, object] = {}
    out["info"], _, _ = command(["info", p])
    out["verify"], doc, out["verify_err"] = command(["info", p, "--verify", "--json"])
    out["doc"] = json.loads(doc) if doc else None
    out["dump"], _, _ = command(["dump", p, "--histograms"])
    out["report"], _, _ = command(["report", p, "--format", "csv"])
    catalog = path.with_name(f"{path.name}.catalog")  # (a new one each time: a new session)
    out["history"], _, _ = command(["history", "import", p, "--catalog", str(catalog)])
    for made in catalog.parent.glob(f"{catalog.name}*"):
        made.unlink()
    replay(p)
    return out


def peak_mb() -> float:
    """This process's peak resident memory (``VmHWM``), in MB."""
    with open("/proc/self/status") as f:
        kb = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    return int(kb) / 1024


def main_(paths: list[str]) -> int:
    results: dict[str, object] = {}
    for p in paths:
        try:
            results[p] = read_every_way(Path(p))
        except Exception:  # noqa: BLE001 (a traceback is what the caller looks for)
            results[p] = traceback.format_exc()
    print(json.dumps({"results": results, "peak_mb": peak_mb()}))
    return 0


if __name__ == "__main__":
    sys.exit(main_(sys.argv[1:]))
