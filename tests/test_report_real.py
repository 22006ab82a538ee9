"""``benchtui report`` and its regression gate on real recordings: two sessions of one
plan (but for its name and rate) recorded by ``benchtui record`` with real fio (json+ with
latency histograms) and iostat, the second with fio's IOPS capped at half the first's
(``--rate_iops``), so that the percentages the report prints are known in advance. The two
are recorded at once, so their plans have a name each (``gate-400``, ``gate-200``): two
sessions of one plan at once on a host are refused (the second finds the first's runs as
leftovers), as they should be."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
BENCHTUI = [sys.executable, "-m", "benchtui"]
RATE = 400  # IOPS of each of the baseline's two jobs


def _plan(directory: Path, rate: int) -> Path:
    plan = directory / f"plan-{rate}.toml"
    args = (f"--filename={directory}/fio-{rate}.dat --size=4m --bs=4k --ioengine=psync "
            f"--numjobs=2 --rate_iops={rate} --runtime=6 --time_based")
    plan.write_text(
        f'[session]\nname = "gate-{rate}"\n\n[hosts.here]\nlocal = true\n\n'
        '[[monitor]]\ntool = "iostat"\n\n'
        f'[[step]]\nname = "randread"\ntool = "fio"\nhosts = "all"\nrepeat = 2\n'
        f'args = "--rw=randread {args}"\n\n'
        f'[[step]]\nname = "seqwrite"\ntool = "fio"\nhosts = "all"\n'
        f'args = "--rw=write {args}"\n')
    return plan


def _benchtui(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BENCHTUI, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def sessions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    require_tool("fio")
    require_tool("iostat")
    d = tmp_path_factory.mktemp("gate")
    old, new = d / "old.btr", d / "new.btr"
    procs = [subprocess.Popen([*BENCHTUI, "record", str(_plan(d, rate)), "-o", str(out)],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
             for rate, out in ((RATE, old), (RATE // 2, new))]
    for p in procs:
        _out, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    return old, new


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_report_against_a_baseline_session(sessions: tuple[Path, Path]) -> None:
    old, new = sessions
    done = _benchtui("report", str(new), "--baseline", f"session={old}", "--skip", "2",
                     "--select", "all", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = _csv(done.stdout)
    iops = [r for r in rows if r["metric"] == "iops" and float(r["value"]) > 0]
    # --select all: randread twice (repeats matched run for run) and seqwrite, on the host
    # and the fleet (by default, each host's median run: tests/test_report_compare.py)
    assert {(r["step"], r["host"], r["repeat"]) for r in iops} == {
        ("randread", "here", "1"), ("randread", "here", "2"), ("seqwrite", "here", "1"),
        ("randread", "(fleet)", "1"), ("randread", "(fleet)", "2"), ("seqwrite", "(fleet)", "1")}
    for r in iops:
        # 2 jobs x RATE/2: fio's own end-of-run figure (its whole run)
        assert float(r["value"]) == pytest.approx(RATE, rel=0.15), r
        assert float(r["percent_of_baseline"]) == pytest.approx(50, abs=8), r
        assert r["source"] == "summary" and r["steady"] in ("yes", "")
    # fleet percentiles are quantiles of the merged histograms, with a baseline
    p99 = [r for r in rows if r["metric"] == "latency_p99_seconds" and r["host"] == "(fleet)"]
    assert p99 and all(r["source"] == "histogram" and r["baseline_value"] for r in p99)
    # the monitor's figures over the same seconds
    assert any(r["metric"] == "disk_util_ratio" and r["item"] for r in rows)


def test_markdown_and_json(sessions: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = sessions
    out = tmp_path / "r.md"
    done = _benchtui("report", str(new), "--baseline", f"session={old}", "-o", str(out))
    assert done.returncode == 0 and done.stdout == "", done.stderr
    text = out.read_text()
    assert "| host |" in text or "| step |" in text
    assert "(50%)" in text or "(49%)" in text or "(51%)" in text
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]  # no temporary left behind
    done = _benchtui("report", str(new), "--select", "median", "--format", "json")
    doc = json.loads(done.stdout)
    randread = [r for r in doc["rows"] if r["step"] == "randread" and r["host"] == "here"]
    assert len(randread) == 1 and randread[0]["runs"] == 2


def test_gate_exit_codes(sessions: tuple[Path, Path], tmp_path: Path) -> None:
    old, new = sessions
    out = str(tmp_path / "report.md")
    base = ["report", str(new), "--baseline", f"session={old}", "--skip", "2", "-o", out]
    done = _benchtui(*base, "--fail-below", "90%")
    assert done.returncode == 3, done.stderr
    assert "randread" in done.stderr and "seqwrite" in done.stderr and "IOPS" in done.stderr
    assert done.stderr.startswith("benchtui: 4 values regressed in 2 steps on 1 host; worst: ")
    assert "%" in done.stderr.splitlines()[1]
    assert _benchtui(*base, "--fail-below", "iops=40%").returncode == 0
    # the baseline against itself passes any gate
    same = ["report", str(old), "--baseline", f"session={old}", "-o", out]
    assert _benchtui(*same, "--fail-below", "99%", "--fail-above", "p99=101%"
                     ).returncode == 0
    done = _benchtui(*base, "--fail-above", "p99=1%")
    assert done.returncode == 3 and " p99 " in done.stderr
    done = _benchtui(*base, "--fail-below", "ninety")
    assert done.returncode == 2 and "not a threshold" in done.stderr


def test_bad_baselines_are_one_sentence(sessions: tuple[Path, Path], tmp_path: Path) -> None:
    _old, new = sessions
    done = _benchtui("report", str(new), "--baseline", "host=nowhere")
    assert done.returncode == 2 and "nowhere" in done.stderr and "here" in done.stderr
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
    done = _benchtui("report", str(new), "--baseline", "step=nosuch")
    assert done.returncode == 2 and "randread" in done.stderr
    other = tmp_path / "other.btr"
    imported = _benchtui("import", str(ROOT / "tests/fixtures/seeds/001_82a32511c661f41a.txt"),
                         "--map", str(ROOT / "examples/import/seed001.toml"), "-o", str(other))
    assert imported.returncode == 0, imported.stderr
    done = _benchtui("report", str(new), "--baseline", f"session={other}", "-o",
                     str(tmp_path / "never.md"))
    assert done.returncode == 2 and "no step in common" in done.stderr
    assert not (tmp_path / "never.md").exists()
    not_a_session = tmp_path / "plan.toml"
    not_a_session.write_text("[session]\n")
    done = _benchtui("report", str(not_a_session))
    # a file that is not a session: exit 1, as dump and replay
    assert done.returncode == 1 and "plan.toml" in done.stderr and "Traceback" not in done.stderr


def test_damaged_baseline_reports_up_to_the_damage(sessions: tuple[Path, Path],
                                                   tmp_path: Path) -> None:
    old, new = sessions
    cut = tmp_path / "cut.btr"
    shutil.copy(old, cut)
    with cut.open("r+b") as f:
        f.truncate(cut.stat().st_size * 2 // 3)
    done = _benchtui("report", str(new), "--baseline", f"session={cut}", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert "warning" in done.stderr and "cut.btr" in done.stderr
    assert any(r["percent_of_baseline"] for r in _csv(done.stdout))
