"""Real pdsh over real sshd hosts (tests/sshd.py) running real iostat, piped live into
``benchtui parse -`` and saved for ``benchtui import``: each host's output under its own name;
the same through moreutils ``ts``, whose stamps become the samples' times."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sshd import SshdHost

pytestmark = pytest.mark.skipif(
    shutil.which("pdsh") is None or shutil.which("ts") is None or shutil.which("iostat") is None,
    reason="pdsh, moreutils (ts) and sysstat are not installed (scripts/setup test)")


def _pdsh(hosts: list[SshdHost], tmp_path: Path, command: str,
          monkeypatch: pytest.MonkeyPatch) -> str:
    """``pdsh -w h1,h2,h3 COMMAND | ...`` as a shell pipeline, with the hosts' ssh config."""
    config = tmp_path / "ssh_config"
    config.write_text("".join(
        f"Host {h.name}\n  HostName {h.address}\n  Port {h.port}\n  User {h.user}\n"
        f"  IdentityFile {h.identity}\n  UserKnownHostsFile {h.known_hosts}\n"
        f"  HostKeyAlias [{h.address}]:{h.port}\n  BatchMode yes\n" for h in hosts))
    monkeypatch.setenv("PDSH_SSH_ARGS", f"-F {config} %h")
    names = ",".join(h.name for h in hosts)
    return f"pdsh -R ssh -w {names} {command}"


def _benchtui(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchtui", *args]


def test_pdsh_iostat_live_and_imported(sshd_hosts: list[SshdHost], tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.setenv("TZ", "UTC")
    names = [h.name for h in sshd_hosts]
    saved = tmp_path / "pdsh.txt"
    # live: pdsh's interleaved lines straight into benchtui parse -, and a copy kept by tee
    pipeline = (_pdsh(sshd_hosts, tmp_path, "iostat -x 1 2", monkeypatch) + f" | tee {saved} | "
                + " ".join(_benchtui("parse", "-")))
    done = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    samples = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted({s["host"] for s in samples}) == names
    for name in names:  # two reports each (the since-boot one kept: parse cannot know -y)
        own = [s for s in samples if s["host"] == name and s["metric"] == "disk_util_ratio"]
        assert sorted({s["elapsed"] for s in own}) == [1.0, 2.0]
        assert any(line.startswith(f"{name}: Device") for line in saved.read_text().splitlines())
    # saved: benchtui import makes one host of each prefix, no --host needed
    session = tmp_path / "s.btr"
    done = subprocess.run(_benchtui("import", str(saved), "--step", "iostat", "-o",
                                    str(session)), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert f"{len(names)} hosts," in done.stderr
    info = subprocess.run(_benchtui("info", str(session)), capture_output=True, text=True,
                          timeout=60, check=True).stdout
    assert all(f"\n  {name}\n" in info for name in names)
    # ts stamps pdsh's lines where they arrive: iostat -d prints no clock, the stamp is its time
    before = time.time()
    stamped = (_pdsh(sshd_hosts, tmp_path, "iostat -d 1 2", monkeypatch)
               + " | ts '%Y-%m-%dT%H:%M:%S%z' | " + " ".join(_benchtui("parse", "-")))
    done = subprocess.run(["bash", "-o", "pipefail", "-c", stamped], capture_output=True,
                          text=True, timeout=60, check=False)
    after = time.time()
    assert done.returncode == 0, done.stderr
    samples = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted({s["host"] for s in samples}) == names
    assert all(int(before) <= s["t"] <= after for s in samples)
    for name in names:
        times = sorted({s["t"] for s in samples if s["host"] == name})
        assert len(times) == 2 and times[1] - times[0] in (1.0, 2.0)
