"""How a run ended, as the record says it, with real processes: Ctrl-C (SIGINT), SIGTERM, a
broken standard output, a step cut by its deadline, the host's watchdog (a controller frozen
with SIGSTOP for longer than its grace, on a real sshd host), a tool that falls silent (real
fio, stopped with SIGSTOP as a stalled cluster stops `rbd bench`), and a recording whose disk
fills. Each leaves a record that ``info``, ``report`` and the gate describe as such; a run
whose only output fails stops at once with one sentence and every process gone."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import psutil
import pytest

from benchtui.cli.main import main
from benchtui.store.recording import SessionReader
from benchtui.transport.watchdog import BEAT_SILENCE
from tests.helpers import FROM_A_TERMINAL, require_tool
from tests.sshd import SshdHost

ROOT = Path(__file__).resolve().parents[1]
STEP = "randrw"


def plan_text(name: str, data: Path, seconds: int, *, extra: str = "") -> str:
    return (f'[session]\nname = "{name}"\n\n[hosts.here]\nlocal = true\n\n'
            '[[monitor]]\ntool = "iostat"\nhosts = "all"\n\n'
            f'[[step]]\nname = "{STEP}"\ntool = "fio"\nhosts = "all"\n{extra}'
            f'args = "--filename={data} --size=16m --rw=randrw --bs=4k --ioengine=psync '
            f'--runtime={seconds} --time_based"\n')


class Benchtui:
    """``benchtui ARGS`` in a process of its own, its stderr lines kept with the time each
    arrived (``time.monotonic``)."""

    def __init__(self, home: Path, *args: str, stdout: int | IO[str] = subprocess.DEVNULL
                 ) -> None:
        self.proc = subprocess.Popen(
            [*FROM_A_TERMINAL, sys.executable, "-m", "benchtui", *args], stdout=stdout,
            stderr=subprocess.PIPE,
            text=True, cwd=ROOT, env={**os.environ, "HOME": str(home)})
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, text: str, seconds: float = 30.0) -> float:
        """When a stderr line holding ``text`` arrived."""
        give_up = time.monotonic() + seconds
        while time.monotonic() < give_up:
            for t, line in list(self.lines):
                if text in line:
                    return t
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} on stderr: {self.stderr()}")

    def finish(self, seconds: float = 60.0) -> int:
        code: int = self.proc.wait(timeout=seconds)
        self._reader.join(timeout=5)
        return code

    def stderr(self) -> str:
        return "\n".join(line for _, line in self.lines)


def fio_pids(marker: str) -> list[int]:
    """fio's processes (and their ``timeout``) of the run whose data file is marked so."""
    out = subprocess.run(["pgrep", "-f", f"{marker}[.]dat"], capture_output=True, text=True,
                         check=False)
    return [int(p) for p in out.stdout.split() if int(p) != os.getpid()]


def gone(marker: str, seconds: float) -> bool:
    give_up = time.monotonic() + seconds
    while fio_pids(marker) and time.monotonic() < give_up:
        time.sleep(0.1)
    return not fio_pids(marker)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def info_step(capsys: pytest.CaptureFixture[str], session: Path) -> dict[str, object]:
    code, out, _ = cli(capsys, "info", str(session), "--json")
    assert code == 0
    steps = json.loads(out)["steps"]
    assert len(steps) == 1
    return steps[0]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("outcomes")
    (d / "home").mkdir()
    return d


@pytest.fixture(scope="module")
def baseline(workdir: Path) -> Path:
    """A run of the step that completed: what the gate compares with."""
    require_tool("fio")
    require_tool("iostat")
    plan = workdir / "base.toml"
    plan.write_text(plan_text("base", workdir / f"base-{uuid.uuid4().hex[:6]}.dat", 7))
    session = workdir / "base.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session))
    assert run.finish() == 0, run.stderr()
    return session


def check_described(capsys: pytest.CaptureFixture[str], session: Path, baseline: Path,
                    outcome: str, reason: str) -> None:
    """``info`` (text and JSON), the reports and the gate all say the step ended so."""
    step = info_step(capsys, session)
    assert step["outcome"] == outcome and step["ok"] is False, step
    assert reason in str(step["reason"]), step
    code, text, _ = cli(capsys, "info", str(session))
    assert re.search(rf"  {STEP}: at \+\S+, \S+, {outcome.upper()}: .*{re.escape(reason)}",
                     text), text
    assert f"\nended     {outcome.upper()}: " in text, text
    code, md, _ = cli(capsys, "report", str(session), "--skip", "0")
    assert code == 0 and f"here [{outcome}]" in md, md
    assert "runs that did not complete" in md and reason in md, md
    code, out, _ = cli(capsys, "report", str(session), "--skip", "0", "--format", "json")
    rows = json.loads(out)["rows"]
    assert rows and all(r["outcome"] == outcome and r["ok"] is False for r in rows), rows
    code, out, _ = cli(capsys, "report", str(session), "--skip", "0", "--format", "csv")
    rows_csv = list(csv.DictReader(io.StringIO(out)))
    assert rows_csv and all(r["outcome"] == outcome for r in rows_csv)
    # the gate: a threshold every value passes, yet the cut run cannot be compared
    code, _, err = cli(capsys, "report", str(session), "--skip", "0", "--baseline",
                       f"session={baseline}", "--fail-below", "1%")
    assert code == 3, err
    assert "the gate left out 1 run(s) that did not complete" in err, err
    assert f"{STEP} / here: {outcome}" in err and reason in err, err
    assert "no regression among the runs that completed" in err, err


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "words"), [(signal.SIGINT, "Ctrl-C (SIGINT)"),
                                            (signal.SIGTERM, "SIGTERM")])
def test_a_signal_leaves_an_interrupted_record(workdir: Path, baseline: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               sig: signal.Signals, words: str) -> None:
    """The issue's run: a step of 120 s stopped after a few: 'interrupted', never 'ok'."""
    marker = f"sig-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 120))
    session = workdir / f"{marker}.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session))
    run.wait_for("here: fio started")
    time.sleep(3.0)
    run.proc.send_signal(sig)
    assert run.finish() == 130, run.stderr()
    assert gone(marker, 5.0)
    assert f"step {STEP} stopped: interrupted ({words})" in run.stderr()
    check_described(capsys, session, baseline, "interrupted", words)


@pytest.mark.slow
def test_a_broken_stdout_stops_the_run_and_says_so(workdir: Path, baseline: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """`run --jsonl --record | head -n 3`: the reader goes away; the run stops at once (not
    after its 120 s), exit 1, one sentence; the record calls the step interrupted."""
    marker = f"pipe-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 120))
    session = workdir / f"{marker}.btr"
    started = time.monotonic()
    run = Benchtui(workdir / "home", "run", str(plan), "--jsonl", "--record", str(session),
                   stdout=subprocess.PIPE)
    assert run.proc.stdout is not None
    run.wait_for("here: fio started")
    for _ in range(3):
        assert run.proc.stdout.readline().startswith("{")
    run.proc.stdout.close()  # as `head -n 3` does once it has its lines
    assert run.finish(30) == 1, run.stderr()
    assert time.monotonic() - started < 30
    assert gone(marker, 5.0)
    said = [line for _, line in run.lines if line.startswith("benchtui: ")]
    assert said == ["benchtui: standard output can no longer be written: its reader went "
                    "away; the session was stopped, and every process benchtui started with "
                    "it"], run.stderr()
    assert "Traceback" not in run.stderr()
    check_described(capsys, session, baseline, "interrupted", "its reader went away")


@pytest.mark.slow
def test_jsonl_into_a_full_device_stops_at_once(workdir: Path) -> None:
    """`run --jsonl > /dev/full`: a 120 s step ends within seconds, exit 1, one sentence,
    every process stopped (before: `done`, exit 0, after 1.3 s)."""
    require_tool("fio")
    marker = f"full-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 120))
    with open("/dev/full", "w", encoding="utf-8") as full:
        started = time.monotonic()
        run = Benchtui(workdir / "home", "run", str(plan), "--jsonl", stdout=full)
        code = run.finish(30)
    assert code == 1, run.stderr()
    assert time.monotonic() - started < 20
    assert gone(marker, 5.0)
    said = [line for _, line in run.lines if line.startswith("benchtui: ")]
    assert said == ["benchtui: standard output can no longer be written: No space left on "
                    "device; the session was stopped, and every process benchtui started "
                    "with it"], run.stderr()
    assert "Traceback" not in run.stderr() and " done" not in run.stderr()


@pytest.mark.slow
def test_a_step_cut_by_its_deadline(workdir: Path, baseline: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`timeout = 4` on a fio step of 60 s: the host's `timeout` ends it; the record says
    'deadline', with the exit status."""
    marker = f"deadline-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 60, extra="timeout = 4\n"))
    session = workdir / f"{marker}.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session))
    assert run.finish(60) == 1, run.stderr()
    assert f"step {STEP} cut by its deadline" in run.stderr(), run.stderr()
    step = info_step(capsys, session)
    assert 3.5 < float(step["seconds"]) < 15, step  # type: ignore[arg-type]
    check_described(capsys, session, baseline, "deadline", "ended by its deadline")


@pytest.mark.slow
def test_a_silent_tool_is_warned_about_at_once_and_noted(
        workdir: Path, baseline: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """fio stopped (SIGSTOP) for 6 s, as a stalled cluster stops a benchmark: with
    `silence = 2` the warning comes within a second or so of the 2 s, once; the run goes
    on and completes; info, the report and the gate say that fio printed nothing."""
    marker = f"silent-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 14, extra="silence = 2\n"))
    session = workdir / f"{marker}.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session))
    run.wait_for("here: fio started")
    time.sleep(3.0)
    pids = fio_pids(marker)
    assert pids
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    stopped = time.monotonic()
    warned = run.wait_for("has printed nothing for", 10)
    time.sleep(max(0.0, 6.0 - (time.monotonic() - stopped)))
    for pid in pids:
        os.kill(pid, signal.SIGCONT)
    assert run.finish(60) == 0, run.stderr()
    assert 1.0 <= warned - stopped < 3.5, warned - stopped  # (its last line came before)
    warnings = [line for _, line in run.lines if "has printed nothing" in line]
    assert len(warnings) == 1, warnings
    assert "warning: here: fio (step randrw) has printed nothing for 2 s (silence 2 s): it " \
        "may be stuck" in warnings[0], warnings
    step = info_step(capsys, session)
    assert step["outcome"] == "completed" and step["ok"] is True
    silences = step["silences"]
    assert isinstance(silences, list) and len(silences) == 1
    assert silences[0]["host"] == "here" and silences[0]["tool"] == "fio"
    assert 5.0 < silences[0]["seconds"] < 9.0, silences
    _, text, _ = cli(capsys, "info", str(session))
    assert re.search(rf"  {STEP}: at .*, completed; fio on here printed nothing for "
                     r"[5-8]\.\ds", text), text
    _, md, _ = cli(capsys, "report", str(session), "--skip", "0")
    assert re.search(r"here \[silent [5-8]s\]", md), md
    assert "tools that fell silent" in md
    code, _, err = cli(capsys, "report", str(session), "--skip", "0", "--baseline",
                       f"session={baseline}", "--fail-below", "1%")
    assert code == 0, err
    assert re.search(r"compared although its tool fell silent: randrw / here printed nothing "
                     r"for [5-8]", err), err


def _fill_while_running(run: Benchtui, disk: Path, recording: Path, said: str) -> float:
    """Fill ``disk`` 3 s into the step, and watch the recording's size: the write that
    fails is the one that leaves it at its last size (a full page of the file still takes
    bytes after the disk is full). ``said`` must come within 2 s of it; when it came."""
    run.wait_for("here: fio started")
    time.sleep(3.0)
    _fill(disk)
    sizes: list[tuple[float, int]] = []
    give_up = time.monotonic() + 15
    while not any(said in line for _, line in run.lines) and time.monotonic() < give_up:
        sizes.append((time.monotonic(), recording.stat().st_size))
        time.sleep(0.02)
    said_at = run.wait_for(said, 1)
    failed_at = min(t for t, size in sizes if size == sizes[-1][1])
    assert said_at - failed_at < 2.0, said_at - failed_at
    print(f"said {said_at - failed_at:.2f} s after the write that failed")
    return said_at


@pytest.fixture
def small_disk(workdir: Path) -> Iterator[Path]:
    """A tmpfs of 2 MiB, mounted for the test (root only)."""
    require_tool("fio")
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = workdir / f"disk-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path) -> None:
    """Write a file on ``disk`` until it is full (as another program's logs do)."""
    with open(disk / "filler", "wb", buffering=0) as f:
        block = b"\0" * 65536
        try:
            while True:
                f.write(block)
        except OSError:
            pass
        while True:  # the last bytes a block left
            try:
                if not f.write(b"\0" * 512):
                    break
            except OSError:
                break


@pytest.mark.slow
def test_a_disk_that_fills_during_record_stops_it_at_once(workdir: Path,
                                                          small_disk: Path) -> None:
    """A 2 MiB tmpfs holds the recording and fills 3 s into a 120 s fio step: within 2 s
    `record` says so, stops the session (fio gone at once) and exits 1 (before: fio ran
    on and the error came only at the end); what was written before is read back."""
    disk = small_disk
    marker = f"fill-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 120))
    session = disk / "s.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session))
    said_at = _fill_while_running(run, disk, session, "can no longer be written: No space "
                                  "left on device")
    assert run.finish(30) == 1, run.stderr()
    assert time.monotonic() - said_at < 5
    assert gone(marker, 3.0)
    assert "Traceback" not in run.stderr()
    assert f"benchtui: the recording {session} can no longer be written: No space left " \
           "on device; the session was stopped" in run.stderr()
    assert "benchtui: recorded " in run.stderr()  # the summary of what is in the file
    with SessionReader.open(str(session)) as reader:
        assert reader.sample_count > 0 and not reader.complete


@pytest.mark.slow
def test_run_jsonl_goes_on_when_its_recording_fills_the_disk(workdir: Path,
                                                             small_disk: Path) -> None:
    """`run --jsonl --record` still has a reader on stdout: the full disk is said within
    2 s, the run goes on to its end with its samples, and exits 1 saying the recording was
    cut."""
    disk = small_disk
    marker = f"fillon-{uuid.uuid4().hex[:8]}"
    plan = workdir / f"{marker}.toml"
    # 14 s: the disk is full ~3 s in and said within 2 s; on a loaded machine the rest of
    # the run must still leave seconds of samples to count after that
    plan.write_text(plan_text(marker, workdir / f"{marker}.dat", 14))
    session = disk / "s.btr"
    run = Benchtui(workdir / "home", "run", str(plan), "--jsonl", "--record", str(session),
                   stdout=subprocess.PIPE)
    out = run.proc.stdout
    assert out is not None
    lines: list[float] = []
    reader = threading.Thread(target=lambda: lines.extend(time.monotonic() for _ in out),
                              daemon=True)
    reader.start()
    said_at = _fill_while_running(run, disk, session, "it ends here and the run goes on")
    assert run.finish(60) == 1, run.stderr()
    reader.join(5)
    assert sum(1 for t in lines if t > said_at + 2) > 10  # samples went on coming
    assert f"step {STEP} done" in run.stderr()
    assert run.lines[-1][1] == (f"benchtui: {session}: cannot write: No space left on "
                                "device"), run.stderr()
    assert "Traceback" not in run.stderr()


@pytest.mark.slow
def test_a_frozen_controller_leaves_a_watchdog_record(
        sshd_hosts: list[SshdHost], workdir: Path, baseline: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's run: `record` on an SSH host frozen (SIGSTOP) for longer than its grace;
    the host's watchdog stops fio; once thawed, the record calls the step 'watchdog'. The
    whole controller is frozen, its heartbeat process with it (as Ctrl-Z or a cgroup freezer
    would): a controller whose event loop alone stalls keeps its hosts' work going for up to
    ``heartbeats.STALL_LIMIT`` (tests/test_controller_overload.py)."""
    host = sshd_hosts[0]
    marker = f"frozen-{uuid.uuid4().hex[:8]}"
    scratch = Path("/tmp") / f"benchtui-{marker}"
    scratch.mkdir(mode=0o777)
    scratch.chmod(0o777)
    plan = workdir / f"{marker}.toml"
    hosts = (f'[hosts.here]\naddress = "{host.address}"\nport = {host.port}\n'
             f'user = "{host.user}"\nidentity = "{host.identity}"\n\n')
    plan.write_text(plan_text(marker, scratch / f"{marker}.dat", 40).replace(
        "[hosts.here]\nlocal = true\n\n", hosts))
    session = workdir / f"{marker}.btr"
    run = Benchtui(workdir / "home", "record", str(plan), "-o", str(session),
                   "--known-hosts", host.known_hosts, "--controller-grace", "2")
    run.wait_for("here: fio started")
    time.sleep(2.0)
    assert fio_pids(marker)
    frozen = [run.proc.pid, *(c.pid for c in psutil.Process(run.proc.pid).children(
        recursive=True))]
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        assert gone(marker, BEAT_SILENCE + 2 + 8), "the host's watchdog did not stop fio"
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    assert run.finish(60) == 1, run.stderr()
    assert "stopped by the host's watchdog" in run.stderr()
    assert "has printed nothing" not in run.stderr()  # (the freeze was the controller's)
    check_described(capsys, session, baseline, "watchdog", "the host's watchdog")
