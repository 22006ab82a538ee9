"""What changed between a session and its baseline (session/changes.py): plans compared
step by step and word by word, facts host by host (paired as compare.py pairs them), and the
gate's summary line and its folding of bandwidth that mirrors IOPS (report/gate.py)."""

from __future__ import annotations

from benchtui.report.gate import BELOW, Threshold, summary, without_mirrors
from benchtui.report.gate import Regression as Found
from benchtui.report.model import Row, Value
from benchtui.session.changes import MAX_FACTS, fact_changes, plan_changes, plan_description
from benchtui.session.compare import BaselineSpec, host_pairs

BEFORE = """
[session]
name = "nc"
description = "before"

[hosts.h1]
address = "10.0.0.1"

[hosts.h2]
address = "10.0.0.2"

[[step]]
name = "rand"
tool = "fio"
hosts = "all"
args = "--rw=randread --ioengine=psync --iodepth=1 --runtime=60"
matrix = { bs = ["4k", "64k"] }

[[step]]
name = "net"
tool = "iperf3"
server = "h1"
clients = ["h2"]
"""

AFTER = BEFORE.replace("--ioengine=psync --iodepth=1", "--ioengine=libaio --iodepth=32") \
    .replace('["4k", "64k"]', '["4k", "128k"]').replace('"before"', '"after"') \
    .replace('[hosts.h2]\naddress = "10.0.0.2"', '[hosts.h2]\naddress = "10.0.0.2"\n\n'
             '[hosts.h3]\naddress = "10.0.0.3"') \
    .replace('clients = ["h2"]', 'clients = ["h2"]\njobfile = "jobs/net.fio"')


def test_plan_changes_step_by_step() -> None:
    found = {(c.where, c.what): (c.before, c.after) for c in plan_changes(BEFORE, AFTER)}
    assert found[("step rand", "args")] == ("--ioengine=psync --iodepth=1",
                                            "--ioengine=libaio --iodepth=32")
    assert found[("step rand", "matrix bs")] == ("[4k, 64k]", "[4k, 128k]")
    assert found[("step net", "jobfile")] == ("", "jobs/net.fio")
    assert found[("host h3", "added:")] == ("", "address = 10.0.0.3")
    assert found[("[session]", "description")] == ("before", "after")
    assert len(found) == 5  # nothing else differs
    assert plan_changes(BEFORE, BEFORE) == []
    assert plan_description(AFTER) == "after"


def test_plans_that_cannot_be_compared_say_so() -> None:
    assert plan_changes("", AFTER)[0].describe() == "plan: not recorded in the baseline"
    assert "not valid TOML" in plan_changes("[[step", AFTER)[0].what
    assert plan_changes("", "") == []


def _facts(kernel: str, scheduler: str, fio: str) -> dict[str, object]:
    return {"hostname": "x", "kernel": kernel, "cpu_model": "Xeon",
            "block_devices": {"nvme0n1": {"name": "nvme0n1", "scheduler": scheduler,
                                          "read_ahead_kb": 128}},
            "tools": {"fio": fio}, "mounts": [{"device": "/dev/nvme0n1",
                                              "mountpoint": "/data", "fstype": "xfs"}]}


def test_fact_changes_said_once_for_every_host_alike() -> None:
    before = {"h1": _facts("6.1", "none", "fio-3.33"), "h2": _facts("6.1", "none", "fio-3.33")}
    after = {"h1": _facts("6.8", "none", "fio-3.36"), "h2": _facts("6.8", "mq-deadline",
                                                                   "fio-3.33")}
    spec = BaselineSpec("session", "before.btr")
    changes = fact_changes(before, after, host_pairs(spec, after, before))
    text = [c.describe() for c in changes]
    assert "hosts h1, h2: kernel 6.1 → 6.8" in text
    assert "host h2: block_devices.nvme0n1.scheduler none → mq-deadline" in text
    assert "host h1: tools.fio fio-3.33 → fio-3.36" in text
    assert len(text) == 3  # the hostname is not a change


def test_fact_changes_against_one_baseline_host_and_a_cap() -> None:
    before = {"ref": {f"k{i}": i for i in range(MAX_FACTS + 5)}}
    after = {"h1": {f"k{i}": i + 1 for i in range(MAX_FACTS + 5)}}
    spec = BaselineSpec("session", "before.btr", host="ref")
    changes = fact_changes(before, after, host_pairs(spec, after, before))
    assert changes[0].where == "host h1 (against ref)"
    assert len(changes) == MAX_FACTS + 1 and changes[-1].what == "and 5 more facts"
    assert host_pairs(BaselineSpec("session", "b", fleet=True), after, before) == []


def _row(step: str, host: str, iops: tuple[float, float], bw: tuple[float, float]) -> Row:
    return Row("s", step, host, step, 1, 0.0, 1.0, [
        Value("iops", "write", iops[0], "ops/s", baseline=iops[1]),
        Value("bandwidth_bytes", "write", bw[0], "B/s", baseline=bw[1])])


def test_the_gate_summary_and_mirrored_bandwidth() -> None:
    th = Threshold(BELOW, ("iops", "bandwidth_bytes"), 95.0, "95%")
    same_bs = _row("rand bs=4k", "h3", (39.0, 100.0), (39.0 * 4096, 100.0 * 4096))
    other_bs = _row("mixed", "h1", (90.0, 100.0), (90.0 * 65536, 100.0 * 4096 * 20))
    found = [Found(r, v, th) for r in (same_bs, other_bs) for v in r.values]
    kept = without_mirrors(found)
    # 4k in both: bandwidth is IOPS x 4096, the same regression; another block size: not
    assert [(r.row.host, r.value.metric) for r in kept] == [
        ("h3", "iops"), ("h1", "iops"), ("h1", "bandwidth_bytes")]
    assert summary(kept, 1) == ("3 values regressed in 2 steps on 2 hosts; worst: 39% of "
                                "baseline, IOPS w, rand bs=4k on h3")
