"""``--record`` and ``--export`` on the commands that run a plan, as a user types them: the
headless recorder serving /metrics while it records, and ``run --jsonl`` recording and
exporting at once; the file then dumps exactly what was printed live."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.export_support import promtool_check
from tests.helpers import require_tool
from tests.test_export_serve import Lines, poll, write_plan


def benchtui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.slow
def test_record_with_export_serves_metrics_while_it_records(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    session = tmp_path / "s.btr"
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtui", "record", str(write_plan(tmp_path)), "-o",
         str(session), "--export", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        err = Lines(proc)
        url = err.wait_for(r"serving metrics on (http://127\.0\.0\.1:\d+/metrics)", 20).group(1)
        body = poll(url, *(rf'^benchtui_iops\{{.*host="{h}"' for h in ("alpha", "beta")))
        checked = promtool_check(body)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert proc.wait(timeout=60) == 0, "".join(err.seen)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    info = json.loads(benchtui("info", str(session), "--json").stdout)
    assert sorted(info["hosts"]) == ["alpha", "beta"]
    assert info["complete"] is True
    assert [(s["name"], s["ok"]) for s in info["steps"]] == [("rw", True)]
    dumped = benchtui("dump", str(session), "--metric", "iops")
    assert dumped.returncode == 0, dumped.stderr
    hosts = {json.loads(x)["host"] for x in dumped.stdout.splitlines()}
    assert hosts == {"alpha", "beta"}


@pytest.mark.slow
def test_run_jsonl_with_record_and_export_dumps_what_it_printed(tmp_path: Path) -> None:
    require_tool("fio")
    require_tool("iostat")
    session = tmp_path / "s.btr"
    out = benchtui("run", str(write_plan(tmp_path)), "--jsonl", "--record", str(session),
                   "--export", "127.0.0.1:0")
    assert out.returncode == 0, out.stderr
    assert "serving metrics on http://127.0.0.1:" in out.stderr
    live = out.stdout.splitlines()
    dumped = benchtui("dump", str(session))
    assert dumped.returncode == 0, dumped.stderr
    assert len(live) > 20
    assert sorted(dumped.stdout.splitlines()) == sorted(live)


def test_headless_commands_never_import_textual() -> None:
    """record, serve, dump, info and run --jsonl work on a machine without a terminal: the
    modules they run import no Textual at all (and no asyncssh until a host needs SSH)."""
    code = ("import sys\n"
            "import benchtui.cli.main, benchtui.cli.record_cmd, benchtui.cli.serve_cmd\n"
            "import benchtui.cli.dump_cmd, benchtui.cli.fleet_cmd, benchtui.cli.extras\n"
            "print(sorted(m for m in ('textual', 'asyncssh') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"
