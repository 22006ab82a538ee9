"""A real session for the HTML report and plot tests, recorded once per test run with
``benchtui record`` as a user runs it: two local hosts running real fio (json+ with
histograms, a status line every second) with real iostat beside them; a 10 s random read
with two jobs (its per-second IOPS are the jobs' sum), then a 4 s random read/write run
twice (``repeat = 2``: a step whose runs are plotted one by one).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.helpers import require_tool

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ("alpha", "beta")
#: Every report and plot of the tests leaves this much ramp-up out (the runs are short).
SKIP = "1"

PLAN = """
[session]
name = "html-test"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[monitor]]
tool = "iostat"

[[step]]
name = "randread"
tool = "fio"
hosts = "all"
args = '''--filename={data} --size=16m --rw=randread --bs=4k --ioengine=psync --numjobs=2
          --runtime=10 --time_based'''

[[step]]
name = "randrw"
tool = "fio"
hosts = "all"
repeat = 2
args = '''--filename={data} --size=16m --rw=randrw --bs=4k --ioengine=psync --runtime=4
          --time_based'''
"""


def benchtui(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtui", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


@functools.cache
def report_session() -> Path:
    """The session file (about 25 s to record, once)."""
    require_tool("fio")
    require_tool("iostat")
    work = Path(tempfile.mkdtemp(prefix="benchtui-html-test-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    plan = work / "plan.toml"
    plan.write_text(PLAN.format(data=work / "fio.dat"))
    path = work / "html-test.btr"
    done = benchtui("record", str(plan), "-o", str(path))
    assert done.returncode == 0, done.stderr
    (work / "fio.dat").unlink(missing_ok=True)
    return path


#: Two sessions of one sweep plan, as a user compares them: fio over a block-size sweep run
#: twice on two hosts (psync in the baseline, libaio after), then iperf3 between them.
COMPARE_PLAN = """
[session]
name = "nc-fleet"
description = "{engine} run"

[hosts.alpha]
local = true

[hosts.beta]
local = true

[[step]]
name = "layout"
tool = "fio"
hosts = "all"
args = "--filename={data} --size=16m --rw=write --bs=1m --ioengine=psync"

[[step]]
name = "rand"
tool = "fio"
hosts = "all"
args = "--filename={data} --size=16m --ioengine={engine} --iodepth=2 --runtime=2 --time_based"
matrix = {{ bs = ["4k", "64k"], rw = ["randread", "randwrite"] }}
repeat = 2

[[step]]
name = "net"
tool = "iperf3"
server = "alpha"
clients = ["beta"]
server_address = "127.0.0.1"
args = "-t 4"
"""


@functools.cache
def compare_sessions() -> tuple[Path, Path]:
    """(baseline, after): the sweep recorded with psync, then with libaio (about 40 s each,
    once per test run). The second finds the first's fio file: a fact that changed."""
    require_tool("fio")
    require_tool("iperf3")
    work = Path(tempfile.mkdtemp(prefix="benchtui-compare-test-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    out = []
    for name, engine in (("before", "psync"), ("after", "libaio")):
        plan = work / f"{name}.toml"
        plan.write_text(COMPARE_PLAN.format(engine=engine, data=work / "fio.dat"))
        path = work / f"{name}.btr"
        done = benchtui("record", str(plan), "-o", str(path), timeout=300)
        assert done.returncode == 0, done.stderr
        out.append(path)
    return out[0], out[1]
