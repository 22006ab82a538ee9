"""Host facts: the script runs on this machine for real and its output parses."""

from __future__ import annotations

import subprocess

from benchtui.session.facts import facts_script, parse_facts


def test_facts_of_this_machine() -> None:
    script = facts_script({"fio": ("fio", "--version"), "sh": None,
                           "no-such-tool-xyz": None})
    out = subprocess.run(["sh", "-c", script],
                         capture_output=True, text=True, timeout=30, check=True)
    facts = parse_facts(out.stdout)
    assert facts["kernel"] and facts["arch"] and facts["hostname"]
    assert facts["cpu_count"] >= 1
    assert facts["mem_bytes"] > 100 * 1024 * 1024
    assert facts["block_devices"], "no block device found in /sys/block"
    for dev in facts["block_devices"].values():
        assert dev["size_bytes"] > 0 and dev["read_ahead_kb"] >= 0
    assert any(m["mountpoint"] == "/" for m in facts["mounts"]) or facts["mounts"] == []
    assert "no-such-tool-xyz" not in facts["tools"]
    assert facts["tools"]["fio"].startswith("fio-")
    # dash has no --version: its complaint ("sh: 0: Illegal option --") is no version
    assert "sh" in facts["tool_paths"] and "option" not in facts["tools"]["sh"]


def test_parse_facts_ignores_damaged_lines() -> None:
    text = ("K\tkernel\t6.1.0\nD\tnvme0n1\t2000\t0\tnone [mq-deadline]\t128\tSamsung SSD\n"
            "D\tbroken\nT\tfio\t/usr/bin/fio\tfio-3.33\ngarbage\x00line\nM\t/dev/sda1\t/\text4\n")
    facts = parse_facts(text)
    assert facts["kernel"] == "6.1.0"
    assert facts["block_devices"]["nvme0n1"] == {
        "name": "nvme0n1", "size_bytes": 1_024_000, "rotational": False,
        "scheduler": "mq-deadline", "read_ahead_kb": 128, "model": "Samsung SSD"}
    assert "broken" not in facts["block_devices"]
    assert facts["tools"] == {"fio": "fio-3.33"}
    assert facts["mounts"] == [{"device": "/dev/sda1", "mountpoint": "/", "fstype": "ext4"}]
