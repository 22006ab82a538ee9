"""The storage conclusion table of seed 000 (under "测试结论"), read from the seed itself: what
``benchtui import`` + ``benchtui report --baseline host=物理机`` must reproduce.

The table's rows are in the order of the report's host bullets under "测试数据" (the table
words the names differently: "Linux 虚拟机 (cache=none)" for the bullet
"Linux虚拟机（cache=none）"), so rows are matched to hosts by position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SEED = Path(__file__).parent / "fixtures" / "seeds" / "000_217b3b91532e58e6.txt"

#: The host bullets under "测试数据", in the report's order (= the table's rows).
HOSTS = ("物理机", "Linux虚拟机（cache=none）", "Linux虚拟机（cache=none, multiqueue=2)",
         "Linux虚拟机(cache=writeback)", "Linux虚拟机(cache=writeback, queues=4)",
         "Windows虚拟机(cache=none)", "Windows虚拟机(cache=none,queues=4)",
         "Windows虚拟机(cache=writeback)", "Windows虚拟机(cache=writeback,queues=4)")

_UNITS = {"": 1, "KiB/s": 1024, "MiB/s": 1024**2, "GiB/s": 1024**3}


@dataclass(frozen=True)
class Cell:
    host: str
    step: str
    metric: str          #: "iops" or "bandwidth_bytes"
    text: str            #: as the table prints it: "22.1k", "782KiB/s"
    value: float         #: in base units (ops/s, B/s)
    percent: int         #: the table's percentage of the physical machine


def _value(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(k?)((?:[KMG]iB/s)?)", text)
    assert m, text
    number = float(m.group(1)) * (1000 if m.group(2) else 1)
    return number * _UNITS[m.group(3)]


def cells() -> list[Cell]:
    """Every (host, step, metric) cell of the table, with its percentage."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if "<td colspan=2> 4KB随机读" in line)
    steps = re.findall(r"<td colspan=2>\s*(\S+)", lines[start])
    rows = [line for line in lines[start + 3:] if line.startswith("|")]
    rows = rows[: 2 * len(HOSTS)]
    out: list[Cell] = []
    for i, host in enumerate(HOSTS):
        values = [c.strip() for c in rows[2 * i].strip("|").split("|")][1:]
        percents = [c.strip() for c in rows[2 * i + 1].strip("|").split("|")][1:]
        assert len(values) == len(percents) == 2 * len(steps), rows[2 * i]
        for j, step in enumerate(steps):
            for k, metric in enumerate(("iops", "bandwidth_bytes")):
                text = values[2 * j + k]
                out.append(Cell(host, step, metric, text, _value(text),
                                int(percents[2 * j + k].strip("()%"))))
    return out


#: Cells whose printed percentage is not what their printed values give, with the reason:
#: the authors divided a MiB/s figure by a KiB/s one as if 1 MiB = 1000 KiB, or mistyped.
#: (host, step, metric) -> the percentage the table's own values give.
_MIB_AS_1000_KIB = "a MiB/s figure divided by the baseline's KiB/s as if 1 MiB = 1000 KiB"
_TRUNCATED = "truncated where the table's other cells round"
AUTHORS_SLIPS: dict[tuple[str, str, str], tuple[int, str]] = {
    (HOSTS[3], "4KB随机读", "bandwidth_bytes"): (7137, _MIB_AS_1000_KIB),
    (HOSTS[4], "4KB随机读", "bandwidth_bytes"): (14666, _MIB_AS_1000_KIB),
    (HOSTS[5], "4KB随机读", "iops"): (1442, _TRUNCATED),
    (HOSTS[5], "4KB随机读", "bandwidth_bytes"): (1440, _MIB_AS_1000_KIB),
    (HOSTS[6], "4KB随机读", "iops"): (1433, _TRUNCATED),
    (HOSTS[6], "4KB随机读", "bandwidth_bytes"): (1427, _MIB_AS_1000_KIB),
    (HOSTS[8], "4KB随机读", "iops"): (2318, _TRUNCATED),
    (HOSTS[8], "4KB随机读", "bandwidth_bytes"): (2318, _MIB_AS_1000_KIB),
    (HOSTS[8], "4KB随机写", "iops"): (256, "a slip of the pen: 18.8k / 7349 is 256%, not 2558%"),
    (HOSTS[8], "4KB随机写", "bandwidth_bytes"): (256, "a slip of the pen: 73.6 / 28.7 MiB/s is "
                                                  "256%, not 2564%"),
    (HOSTS[8], "1MB顺序写", "iops"): (107, _TRUNCATED),
    (HOSTS[8], "1MB顺序写", "bandwidth_bytes"): (107, _TRUNCATED),
}
