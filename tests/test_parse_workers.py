"""Parser worker processes (``session/parse_pool.py``, ``parse_worker.py``), with real
processes and a real fio json+ capture (fio 3.33, 32 jobs, ``benchmarks/captures``):

- a run parsed in a worker gives the same samples, sample for sample, as in process;
- a worker killed with SIGKILL mid-run: a new one takes its runs over, each loses one
  interval (the first document of its new parser), the rest is the same; one warning
  names the runs;
- a worker frozen with SIGSTOP: killed after the documented timeout, its runs resumed;
- the workers end with the pool (no process left);
- through the command line (``run --jsonl``), the same output, warnings and exit status
  with ``--parse-workers 1`` as with 0, and the workers end with the session, also when
  the controller is killed.
"""

from __future__ import annotations

import asyncio
import json
import lzma
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from benchtui.model.fio_buckets import FIO_PLAT_BITS
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.session import parse_pool
from benchtui.session.ingest import RunIngest
from benchtui.session.parse_pool import ParsePool, workers_for
from benchtui.session.parse_worker import Answer
from benchtui.transport.base import Chunk
from tests.test_cli_outcomes import Benchtui

ROOT = Path(__file__).resolve().parent.parent
CAPTURE = ROOT / "benchmarks" / "captures" / "fio-json-plus-32jobs-20s.json.xz"
#: The size of an SSH read: a 32-job document comes in ~27 chunks.
CHUNK = 32 << 10


def capture(documents: int = 10) -> bytes:
    """The capture's first ``documents`` status dumps and its final report."""
    data = lzma.decompress(CAPTURE.read_bytes())
    starts = [i + 1 for i in range(len(data)) if data.startswith(b"\n{\n", i)]
    return data[:starts[documents - 1]] + data[starts[-1]:]


def chunks(data: bytes) -> list[Chunk]:
    return [Chunk(i + len(data[i:i + CHUNK]), data[i:i + CHUNK])
            for i in range(0, len(data), CHUNK)]


def in_process(data: bytes, host: str) -> list[Sample]:
    parser = registry.all_parsers()["fio-json"](host=host, source=f"{host}:fio")
    parser.stream = True
    ingest = RunIngest(parser, lines_wanted=False)
    out: list[Sample] = []
    for n, chunk in enumerate(chunks(data)):
        out += ingest.feed(chunk, 1000.0 + n).samples
    return out + ingest.finish(2000.0).samples


def key(s: Sample) -> tuple[object, ...]:
    """A sample without its ``elapsed`` (compared apart: after a resume, within 1 µs)."""
    hist = repr(s.histogram)
    return (s.t, s.tool, s.kind, s.metric, s.value, tuple(sorted(s.labels.items())), s.host,
            s.duration, hist)


async def in_workers(pool: ParsePool, data: dict[str, bytes],
                     midway: Callable[[ParsePool], None] | None = None
                     ) -> dict[str, list[Sample]]:
    """Each host's run fed through ``pool``; ``midway`` called once half of it was parsed."""
    got: dict[str, list[Sample]] = {host: [] for host in data}

    def on_answer(host: str) -> Callable[[Answer, list[str], float], None]:
        return lambda answer, _lines, _t: got[host].extend(answer.samples)

    slots = {host: pool.open("fio-json", host, f"{host}:fio", f"{host} fio", on_answer(host))
             for host in data}
    runs = {host: chunks(d) for host, d in data.items()}
    longest = max(len(c) for c in runs.values())
    for n in range(longest):
        for host, slot in slots.items():
            if n < len(runs[host]):
                await pool.room(slot)
                chunk = runs[host][n]
                pool.feed(slot, chunk.data, chunk.offset, 1000.0 + n, [])
        if n == longest // 2 and midway is not None:
            for slot in slots.values():
                await pool.settled(slot)
            midway(pool)
    for slot in slots.values():
        await asyncio.wait_for(pool.settled(slot), 60)
        await asyncio.wait_for(pool.finish(slot, 2000.0, []), 60)
        pool.close_run(slot)
    return got


def gone(pids: list[int], within: float = 10.0) -> bool:
    until = time.monotonic() + within
    while time.monotonic() < until:
        if not any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie"
                   for p in pids):
            return True
        time.sleep(0.05)
    return False


def test_the_workers_are_chosen_for_big_sessions_on_several_cores() -> None:
    assert workers_for(None, hosts=32, cores=4) == 2
    assert workers_for(None, hosts=32, cores=16) == parse_pool.AUTO_MAX
    assert workers_for(None, hosts=32, cores=2) == 0  # (measured: worse where cores are short)
    assert workers_for(None, hosts=8, cores=16) == 0  # (small: no process started)
    assert workers_for(None, hosts=1000, cores=1) == 0
    assert workers_for(0, hosts=1000, cores=16) == 0
    assert workers_for(3, hosts=1, cores=1) == 3


def test_the_cores_counted_are_the_ones_the_controller_may_run_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A controller pinned to a few CPUs of a big machine (taskset, a container's cpuset)
    counts those: the parse workers by default, and the report's second reader, alike."""
    import sys

    from benchtui import cpus
    from benchtui.report import step_reads

    assert cpus.usable_cpus() == len(os.sched_getaffinity(0))
    pinned = subprocess.run(
        [sys.executable, "-c", "import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))});"
         " from benchtui.cpus import usable_cpus; print(usable_cpus(), os.cpu_count())"],
        capture_output=True, text=True, timeout=60, check=True)
    assert pinned.stdout.split()[0] == "1", pinned.stdout  # whatever os.cpu_count() says
    # 16 CPUs to run on (a 64-core machine): workers as for 16 cores
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(16)))
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert workers_for(None, hosts=32) == parse_pool.AUTO_MAX
    assert step_reads.usable_cpus is cpus.usable_cpus and cpus.usable_cpus() == 16
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {3})  # pinned to one
    assert workers_for(None, hosts=32) == 0 and cpus.usable_cpus() == 1


def test_workers_parse_as_this_process_does_and_a_killed_one_loses_one_interval() -> None:
    data = capture()
    hosts = {"h1": data, "h2": data, "h3": data}
    want = {host: in_process(data, host) for host in hosts}
    warnings: list[str] = []

    async def both() -> tuple[dict[str, list[Sample]], dict[str, list[Sample]], list[int]]:
        pool = ParsePool(2, warnings.append, FIO_PLAT_BITS)
        same = await in_workers(pool, hosts)
        await pool.close()
        assert gone(pool.pids) and not warnings
        pool = ParsePool(2, warnings.append, FIO_PLAT_BITS)
        killed: list[int] = []

        def kill(p: ParsePool) -> None:
            killed.append(p.pids[0])  # (the worker of h1 and h3)
            os.kill(killed[0], signal.SIGKILL)

        after = await in_workers(pool, hosts, kill)
        pids = pool.pids
        await pool.close()
        assert killed[0] not in pids and len(pids) == 2
        assert gone(pids + killed)
        return same, after, pids

    same, after, _ = asyncio.run(both())
    for host in hosts:  # sample for sample, the histograms included
        assert same[host] == want[host], host
    assert len(warnings) == 1, warnings
    assert "a new one took over h1 fio, h3 fio" in warnings[0]
    assert "h2" not in warnings[0] and "at most one interval" in warnings[0]
    assert after["h2"] == want["h2"]
    for host in ("h1", "h3"):
        have = {key(x) for x in after[host]}
        lost = [s for s in want[host] if key(s) not in have]
        assert len({s.t for s in lost}) == 1 and len(lost) == 640, (host, len(lost))
        kept = [s for s in want[host] if s.t != lost[0].t]
        assert [key(s) for s in after[host]] == [key(s) for s in kept]
        for s, x in zip(after[host], kept, strict=True):  # (counted from the run's origin)
            assert s.elapsed == pytest.approx(x.elapsed, abs=1e-6)


def test_a_frozen_worker_is_killed_after_the_timeout_and_its_runs_resumed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parse_pool, "HANG_TIMEOUT", 1.0)
    data = capture(6)
    warnings: list[str] = []
    stopped: list[int] = []

    async def frozen() -> dict[str, list[Sample]]:
        pool = ParsePool(1, warnings.append, FIO_PLAT_BITS)

        def stop(p: ParsePool) -> None:
            stopped.append(p.pids[0])
            os.kill(stopped[0], signal.SIGSTOP)

        try:
            return await asyncio.wait_for(in_workers(pool, {"h1": data}, stop), 60)
        finally:
            await pool.close()

    got = asyncio.run(frozen())
    assert gone(stopped)
    assert len(warnings) == 1 and "did not answer for 1 s" in warnings[0], warnings
    want = in_process(data, "h1")
    assert len({s.t for s in want} - {s.t for s in got["h1"]}) == 1


def _plan(tmp_path: Path, command: str) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text('[session]\nname = "workers"\n\n[hosts.here]\nlocal = true\n\n'
                    f'[[step]]\nname = "wide"\ntool = "command"\nparser = "fio-json"\n'
                    f'command = "{command}"\n')
    return plan


def test_run_jsonl_is_the_same_with_a_parse_worker(tmp_path: Path) -> None:
    """The same output, warnings and exit status, in process and in a worker; a garbage
    document in the middle of the output is said the same."""
    data = capture(4)
    cut = data.index(b"\n{\n", 1000) + 1
    output = tmp_path / "fio.json"
    output.write_bytes(data[:cut] + b'{\n  "jobs" : [ not json\n}\n' + data[cut:])
    plan = _plan(tmp_path, f"cat {output}")
    home = tmp_path / "home"
    home.mkdir()
    seen = {}
    for workers in ("0", "1"):
        with (tmp_path / f"out-{workers}.jsonl").open("w") as out:
            run = Benchtui(home, "run", str(plan), "--jsonl", "--verbose",
                           "--parse-workers", workers, stdout=out)
            code = run.finish(120)
        lines = (tmp_path / f"out-{workers}.jsonl").read_text().splitlines()
        said = [line.split("] ", 1)[1] for line in run.stderr().splitlines()
                if "JSON" in line or "samples" in line]
        seen[workers] = (code, lines, said)
    assert seen["0"] == seen["1"]
    code, lines, said = seen["0"]
    assert code == 0 and len(lines) > 1000
    assert any("not a valid JSON document (ignored)" in s for s in said), said
    assert any("command exited with status 0" in s for s in said), said


def test_the_workers_end_with_the_session_and_with_a_killed_controller(
        tmp_path: Path) -> None:
    data = capture(3)
    output = tmp_path / "fio.json"
    output.write_bytes(data)
    plan = _plan(tmp_path, f"sh -c 'cat {output}; sleep 60'")
    home = tmp_path / "home"
    home.mkdir()
    for how in (signal.SIGHUP, signal.SIGKILL):
        run = Benchtui(home, "run", str(plan), "--jsonl", "--parse-workers", "1",
                       stdout=subprocess.DEVNULL)
        run.wait_for("started")
        until = time.monotonic() + 30
        workers: list[int] = []
        while not workers and time.monotonic() < until:
            workers = [c.pid for c in psutil.Process(run.proc.pid).children()
                       if "parse_worker" in " ".join(c.cmdline())]
            time.sleep(0.1)
        assert len(workers) == 1, run.stderr()
        run.proc.send_signal(how)
        code = run.finish(30)
        assert code == (-9 if how == signal.SIGKILL else 130), run.stderr()
        assert gone(workers), (how, workers)


def test_what_a_parser_raises_in_a_worker_is_raised_in_the_follower_as_in_process() -> None:
    """Bytes lost between two chunks: ``RunIngest.feed`` raises, in process and in a worker
    alike (the run's follower raises it); a parser name the worker cannot make is said as
    it would be here."""
    data = capture(2)
    parts = chunks(data)
    ingest = RunIngest(registry.all_parsers()["fio-json"](host="h1"), lines_wanted=False)
    ingest.feed(parts[0], 1.0)
    with pytest.raises(ValueError) as here:
        ingest.feed(parts[2], 2.0)

    async def in_worker() -> tuple[BaseException | None, BaseException | None]:
        pool = ParsePool(1, print, FIO_PLAT_BITS)
        try:
            slot = pool.open("fio-json", "h1", "h1:fio", "h1 fio", lambda *_: None)
            for part in (parts[0], parts[2]):
                pool.feed(slot, part.data, part.offset, 1.0, [])
            raised = unknown = None
            try:
                await asyncio.wait_for(pool.settled(slot), 60)
            except ValueError as exc:
                raised = exc
            other = pool.open("no-such-parser", "h2", "h2:x", "h2 x", lambda *_: None)
            pool.feed(other, b"x\n", 2, 1.0, [])
            try:
                await asyncio.wait_for(pool.settled(other), 60)
            except KeyError as exc:
                unknown = exc
            return raised, unknown
        finally:
            await pool.close()

    raised, unknown = asyncio.run(in_worker())
    assert str(raised) == str(here.value)
    assert unknown is not None and "no-such-parser" in str(unknown)


def test_a_session_goes_on_when_its_parse_worker_is_killed(tmp_path: Path) -> None:
    """``run --jsonl`` with a worker killed with SIGKILL mid-run: a new worker takes the run
    over, one warning says so and what was lost, the session ends as it would have (exit 0),
    and its samples are those of a run parsed in process less one interval."""
    data = capture(12)
    starts = [0] + [i + 1 for i in range(len(data)) if data.startswith(b"\n{\n", i)]
    docs = tmp_path / "docs"
    docs.mkdir()
    for n, (a, b) in enumerate(zip(starts, [*starts[1:], len(data)], strict=True)):
        (docs / f"{n:02d}.json").write_bytes(data[a:b])
    plan = _plan(tmp_path, f"sh -c 'for f in {docs}/*.json; do cat $f; sleep 0.4; done'")
    home = tmp_path / "home"
    home.mkdir()
    rows = {}
    for workers in ("0", "1"):
        out_file = tmp_path / f"out-{workers}.jsonl"
        with out_file.open("w") as out:
            run = Benchtui(home, "run", str(plan), "--jsonl", "--parse-workers", workers,
                           stdout=out)
            if workers == "1":
                until = time.monotonic() + 60
                while out_file.stat().st_size < 3 * 640 * 150 and time.monotonic() < until:
                    time.sleep(0.05)  # (three documents' samples out)
                [worker] = [c for c in psutil.Process(run.proc.pid).children()
                            if "parse_worker" in " ".join(c.cmdline())]
                worker.kill()
            assert run.finish(120) == 0, run.stderr()
        rows[workers] = [json.loads(line) for line in out_file.read_text().splitlines()]
    said = [line for line in run.stderr().splitlines() if "parser process" in line]
    assert len(said) == 1 and "a new one took over here command" in said[0], said
    assert "at most one interval" in said[0]
    whole = [{k: v for k, v in r.items() if k != "elapsed"} for r in rows["0"]]
    resumed = [{k: v for k, v in r.items() if k != "elapsed"} for r in rows["1"]]
    lost = [r for r in whole if r not in resumed]
    assert len({r["t"] for r in lost}) == 1 and len(lost) > 500, len(lost)  # (one document)
    assert resumed == [r for r in whole if r["t"] != lost[0]["t"]]
    kept = [r for r in rows["0"] if r["t"] != lost[0]["t"]]
    assert [r["elapsed"] for r in rows["1"]] == pytest.approx([r["elapsed"] for r in kept],
                                                              abs=1e-6)
