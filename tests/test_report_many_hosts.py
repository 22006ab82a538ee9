"""``benchtui report --format html`` of many hosts (docs/report-html.md, "Many hosts"): past
``spread.MANY_HOSTS`` hosts a step's per-second plots are the hosts' distribution (median,
middle half, 90%) with the hosts furthest from the others drawn and named, the overview's
bars a box per step, the steadiness a count with the hosts that are not steady said one by
one; a few hosts keep a line (and a latency panel) per host
(tests/test_report_html.py).

The fleet is the real fio session of tests/report_recording.py (two local hosts, json+
with histograms) written again, through the recorder's own ``SessionWriter``, as 24 hosts:
each a copy of alpha's records under its own name, and two of them (``SLOW``)
with a quarter of the IOPS and bandwidth and four times the latency: outliers to name.
"""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import pytest

from benchtui.model.events import Event
from benchtui.model.histogram import LatencyHistogram
from benchtui.model.sample import Sample
from benchtui.report.html_steady import steadiness_summary
from benchtui.report.model import Row
from benchtui.report.spread import MANY_HOSTS
from benchtui.report.steady import Steadiness
from benchtui.store.recording import Record, SessionReader, SessionWriter
from tests.report_recording import HOSTS, SKIP, benchtui, report_session
from tests.test_report_html import inline_svgs, texts

N = 24
NAMES = [f"h{i:02d}" for i in range(N)]
SLOW = ("h05", "h16")
#: Each new host is a copy of this real host's records: all of one host, so that the fleet's
#: median is that host's figures and only SLOW lie off it (copies of both real hosts made
#: two groups of 12 whose gap, when the suite's load slowed one host, hid the slow ones:
#: "no host stands out").
SOURCE = dict.fromkeys(NAMES, HOSTS[0])


def _slowed(s: Sample) -> Sample:
    if s.metric in ("iops", "bandwidth_bytes"):
        return dataclasses.replace(s, value=s.value / 4)
    if s.metric.startswith("latency"):
        h = s.histogram
        if h is not None:  # x4 maps a bucket onto the one two octaves up (fio's scheme)
            h = LatencyHistogram({k * 4: c for k, c in h.counts.items()})
        return dataclasses.replace(s, value=s.value * 4, histogram=h)
    return s


def _copies(record: Record) -> list[Record]:
    if isinstance(record, Event):
        if record.host is None:
            data = dict(record.data)
            if isinstance(data.get("hosts"), list):
                data["hosts"] = list(NAMES)
            return [dataclasses.replace(record, data=data)]
        return [dataclasses.replace(record, host=name,
                                    message=record.message.replace(record.host, name, 1))
                for name, source in SOURCE.items() if source == record.host]
    if not isinstance(record, list):
        return [record]
    out: list[Sample] = []
    for name, source in SOURCE.items():
        for s in record:
            if s.host == source:
                copy = dataclasses.replace(s, host=name, labels=dict(s.labels))
                out.append(_slowed(copy) if name in SLOW else copy)
    return [out] if out else []


def many_hosts_session(path: Path) -> Path:
    with SessionReader.open(str(report_session())) as reader:
        meta = reader.meta
        facts = {name: meta.facts[SOURCE[name]] for name in NAMES
                 if SOURCE[name] in meta.facts}
        writer = SessionWriter(str(path), dataclasses.replace(meta, hosts=NAMES, facts=facts))
        batch: list[tuple[float, Record]] = []
        for t, record in reader.timed_records(-math.inf, math.inf):
            if batch and t - batch[0][0] >= 1.0:  # a second's records a call, as recorded
                writer.append(batch)
                batch = []
            batch += [(t, copy) for copy in _copies(record)]
        writer.append(batch)
        writer.close(reader.end)
    return path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    work = tmp_path_factory.mktemp("many")
    session = many_hosts_session(work / "many.btr")
    out = work / "report.html"
    done = benchtui("report", str(session), "--skip", SKIP, "--select", "all",
                    "--format", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text(encoding="utf-8")


def _named(found: list[str]) -> set[str]:
    """The hosts a plot names (``op: host (+300%)`` in a legend, ``host (-75%)`` by a dot)."""
    return {m.group(1) for t in found for m in [re.search(r"\b(h\d\d) \([+-]\d+%\)", t)] if m}


def test_many_hosts_are_one_distribution_with_the_outliers_named(page: str) -> None:
    assert N > MANY_HOSTS
    svgs = inline_svgs(page)
    # the boxes, then IOPS, bandwidth, latency and the fleet's latency of randread, randrw
    # run 1 and run 2 (as with two hosts: one figure each, whatever the hosts)
    assert len(svgs) == 1 + 3 * 4
    boxes, timeseries = texts(svgs[0]), [texts(svg) for svg in svgs[1:]]
    assert "hosts furthest from the others, named" in boxes
    assert _named(boxes) == set(SLOW), boxes
    for i, found in enumerate(timeseries):
        if i % 4 == 3:  # the fleet's percentiles of the merged histograms, as before
            assert "fleet read" in found, (i, found)
            continue
        assert "the hosts' median" in found and "middle half (p25-p75)" in found, (i, found)
        assert f"read: {N} hosts" in found, (i, found)
        # the slow hosts, and only they, are named, each with how far it lies off
        assert _named(found) == set(SLOW), (i, found)
        quarter = [t for t in found if re.search(r"h05 \(-7\d%\)", t)]
        four_times = [t for t in found if re.search(r"h05 \(\+[2-3]\d\d%\)", t)]
        assert quarter if i % 4 in (0, 1) else four_times, (i, found)
        # no host has a line or a panel of its own
        assert not any(t in (f"{h} read", h) for t in found for h in NAMES), (i, found)


def test_many_hosts_steadiness_is_a_count_then_each_host_that_is_not_steady() -> None:
    steady, unsteady = Steadiness(True, 0.02, 0.0, 30), Steadiness(False, 0.4, 0.1, 30)
    rows = tuple(Row("s", "randread", name, "randread", 1, 0.0, 60.0,
                     steadiness=None if name == "h16" else unsteady if name == "h05"
                     else steady) for name in NAMES)
    text = steadiness_summary(rows)
    assert f"<b>{N - 2} of {N} hosts</b> steady" in text
    # the two that are not steady are each said, the others are not named
    assert "<b>h05</b>: ✗ NOT steady: IOPS varies by 40%" in text
    assert "<b>h16</b>: no verdict" in text
    assert re.findall(r"<b>(h\d\d)</b>", text) == ["h05", "h16"]
    all_steady = steadiness_summary(tuple(dataclasses.replace(r, steadiness=steady)
                                           for r in rows))
    assert all_steady == f'<li class="yes"><b>{N} of {N} hosts</b> steady</li>'
