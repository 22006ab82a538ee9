"""A tool's garbage or endless output costs the controller bounded memory, over SSH as on
this machine (issue 27: 100 MB of garbage over SSH took 1.25 GB, 73 MB locally): 60 MB of
random bytes then a 40 MB line without an end, read by fio's parser, through ``run
--jsonl`` (the same bytes both times). The line is cut at ``MAX_LINE_BYTES``, the rest
dropped, and both are said."""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from benchtui.transport.lines import MAX_LINE_BYTES
from tests.sshd import SshdHost
from tests.test_host_loss import host_table

ROOT = Path(__file__).resolve().parents[1]
#: Runs ARGV and prints its peak resident memory (KiB) last on stderr: the only child of a
#: fresh process, so RUSAGE_CHILDREN is its own.
PEAK = ("import resource, subprocess, sys\n"
        "code = subprocess.run(sys.argv[1:]).returncode\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(code)\n")
#: The same garbage both times (the parser's memory varies with what it reads): random bytes
#: from a file, then a line without an end.
GARBAGE = "sh -c 'cat {file}; head -c 40000000 /dev/zero'"


def peak_kib(plan: Path, *options: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "benchtui", "run",
                           str(plan), "--jsonl", *options], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=300, check=False)
    lines = done.stderr.rstrip("\n").splitlines()
    assert done.returncode == 0, done.stderr
    return int(lines[-1]), "\n".join(lines[:-1])


@pytest.mark.slow
def test_garbage_costs_as_little_over_ssh_as_here(sshd_hosts: list[SshdHost],
                                                  tmp_path: Path) -> None:
    host = sshd_hosts[0]
    garbage = Path(tempfile.mkdtemp(prefix="benchtui-garbage-")) / "random.bin"
    garbage.parent.chmod(0o755)  # (the SSH host's user reads it too: it is this machine)
    # (random bytes, but the same ones at every run: fresh ones from os.urandom now and
    # then held a run of letters that reads as a word, and the last check below failed)
    garbage.write_bytes(random.Random(32).randbytes(60_000_000))
    step = (f'[[step]]\nname = "garbage"\ntool = "command"\nparser = "fio-json"\n'
            f'command = "{GARBAGE.format(file=garbage)}"\n')
    here = tmp_path / "here.toml"
    here.write_text('[session]\nname = "here"\n\n[hosts.h]\nlocal = true\n\n' + step)
    far = tmp_path / "far.toml"
    far.write_text('[session]\nname = "far"\n\n' + host_table("h", host) + step)
    try:
        local, local_err = peak_kib(here)
        remote, remote_err = peak_kib(far, "--known-hosts", host.known_hosts)
    finally:
        shutil.rmtree(garbage.parent)
    assert remote < 2 * local, (remote, local)
    for err in (local_err, remote_err):
        end = next(line for line in err.splitlines() if "h: command exited with status 0" in line)
        # the 40 MB line (and what the random bytes had begun of it) less the 1 MiB kept
        said = re.search(r", 0 samples, 1 line\(s\) cut \((\d+) bytes dropped\); nothing it "
                         r"printed reads as words$", end)
        assert said and 0 <= int(said.group(1)) - (40_000_000 - MAX_LINE_BYTES) < 10_000, end
