"""Output as users keep it: lines prefixed by pdsh/clush (``n3: ``) and stamped by a logger
(``ts``, ISO 8601, syslog), read by ``benchtui parse`` and ``benchtui import``.

The fixtures are real (tests/fixtures/prefixed/README.md: real pdsh and clush over real sshd
running real iostat and fio, moreutils ``ts`` stamping real iostat and iperf). Each host's
figures are checked against that host's lines alone, prefixes cut off here by plain string
operations, and each stamped line's time against its stamp read here with ``datetime``.
"""

from __future__ import annotations

import calendar
import io
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchtui.cli.main import main
from benchtui.model.events import OutputLines
from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.parsers._host_streams import HostStreams
from benchtui.parsers._prefixes import PrefixShape, _utc, find_prefixes
from benchtui.parsers.fio_json import FioJsonParser
from benchtui.parsers.iostat import IostatParser
from benchtui.parsers.iperf2 import Iperf2Parser
from benchtui.store.recording import SessionReader
from tests.helpers import FIXTURES, SEEDS, check_invariants, parse_with

PREFIXED = FIXTURES / "prefixed"


def text(name: str) -> str:
    return (PREFIXED / name).read_text(encoding="utf-8")


def cli_samples(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> list[dict]:
    assert main(["parse", *args, str(path)]) == 0
    captured = capsys.readouterr()
    assert "warning" not in captured.err, captured.err
    return [json.loads(line) for line in captured.out.splitlines()]


def by_host(lines: list[str]) -> dict[str, list[str]]:
    """pdsh's lines of each host, its ``host: `` cut off (str.partition)."""
    out: dict[str, list[str]] = {}
    for line in lines:
        host, sep, rest = line.partition(": ")
        if not sep and line.endswith(":"):
            host, rest = line[:-1], ""
        out.setdefault(host, []).append(rest)
    return out


def key(s: Sample | dict) -> tuple:
    if isinstance(s, dict):
        return (s["host"], s["metric"], s["kind"], tuple(sorted(s["labels"].items())),
                s.get("elapsed"), s["value"])
    return (s.host, s.metric, s.kind, tuple(sorted(s.labels.items())), s.elapsed, s.value)


@pytest.mark.parametrize(("name", "hosts", "cls"), [
    ("pdsh_iostat_x.txt", ["n1", "n2", "n3", "n4"], IostatParser),
    ("clush_iostat_x.txt", ["n1", "n2"], IostatParser),
    ("pdsh_fio_json.txt", ["n1", "n2"], FioJsonParser),
])
def test_pdsh_prefixes_are_hosts(name: str, hosts: list[str], cls: type,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each host's samples are those of its own lines read alone, under its name."""
    got = cli_samples(PREFIXED / name, capsys)
    assert sorted({s["host"] for s in got}) == hosts
    want = []
    for host, lines in by_host(text(name).splitlines()).items():
        alone, parser = parse_with(cls, "\n".join(lines), host=host)
        assert alone and not parser.warnings
        want += alone
    assert sorted(map(key, got)) == sorted(map(key, want))


def test_pdsh_fio_text_every_host_as_printed(capsys: pytest.CaptureFixture[str]) -> None:
    got = cli_samples(PREFIXED / "pdsh_fio_text.txt", capsys)
    printed = {}
    for line in text("pdsh_fio_text.txt").splitlines():
        host, _, rest = line.partition(": ")
        if rest.strip().startswith("read: IOPS="):
            printed[host] = float(rest.split("IOPS=")[1].split(",")[0])
    assert len(printed) == 3
    summary = {s["host"]: s["value"] for s in got
               if s["metric"] == "iops" and s["kind"] == "summary" and s["labels"]["op"] == "read"}
    assert summary == pytest.approx(printed, abs=0.5)


def _stamp(text_: str, fmt: str) -> float:
    return datetime.strptime(text_, fmt).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("name", "cut", "fmt"), [
    ("ts_iostat_d_iso.txt", lambda ln: ("-", ln[:19], ln[20:]), "%Y-%m-%d %H:%M:%S"),
    ("pdsh_remote_ts_iso.txt", lambda ln: (ln[:2], ln[4:23], ln[24:]), "%Y-%m-%d %H:%M:%S"),
    ("pdsh_iostat_d_then_ts.txt", lambda ln: (ln[16:18], "2026 " + ln[:15], ln[20:]),
     "%Y %b %d %H:%M:%S"),
])
def test_stamps_are_the_lines_times(name: str, cut, fmt: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """iostat -d prints no clock: a device line's samples take its stamp as their time."""
    got = cli_samples(PREFIXED / name, capsys)
    want: dict[tuple[str, float], float] = {}  # (host, elapsed) -> the device line's stamp
    reports: dict[str, int] = {}
    for line in text(name).splitlines():
        host, stamp, rest = cut(line)
        if rest.startswith("vda"):
            reports[host] = reports.get(host, 0) + 1
            want[(host, float(reports[host]))] = _stamp(stamp, fmt)
    assert len(want) == 3 * len(reports) and got
    assert {(s["host"], s["elapsed"]): s["t"] for s in got} == want


def test_syslog_year_is_the_one_before_the_files_time() -> None:
    shape = find_prefixes(text("pdsh_iostat_d_then_ts.txt"))
    assert shape == PrefixShape("stamp host", "syslog")
    lines = "Dec 31 23:59:59 n1: x\nJan  1 00:00:01 n1: y"
    streams = HostStreams([IostatParser], shape, reference=_stamp("2017-01-02", "%Y-%m-%d"))
    got = [streams.prefixes.split(line)[1] for line in lines.split("\n")] if streams.prefixes \
        else []
    assert got == [_stamp("2016-12-31 23:59:59", "%Y-%m-%d %H:%M:%S"),
                   _stamp("2017-01-01 00:00:01", "%Y-%m-%d %H:%M:%S")]
    # no reference (a library caller that gave none): the stamp is removed, no time is made up
    assert HostStreams([IostatParser], shape).prefixes.split("Dec 31 23:59:59 n1: x") == (
        "n1", None, "x")


@pytest.mark.parametrize(("name", "fmt"), [("ts_iperf2_e_default.txt", "ts"),
                                           ("ts_iperf2_epoch.txt", "epoch")])
def test_stamped_iperf2(name: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    got = cli_samples(PREFIXED / name, capsys)
    lines = [line for line in text(name).splitlines() if " sec " in line and "Bytes" in line]
    stamps = [float(line.split()[0]) if fmt == "epoch" else
              _stamp("2026 " + line[:15], "%Y %b %d %H:%M:%S") for line in lines]
    rates = [s for s in got if s["metric"] == "net_bandwidth_bytes"]
    assert [s["t"] for s in rates] == stamps
    stripped = "\n".join(line.split(" ", 1)[1] if fmt == "epoch" else line[16:]
                         for line in text(name).splitlines())
    alone, _ = parse_with(Iperf2Parser, stripped)
    assert sorted(key(s)[1:] for s in got) == sorted(key(s)[1:] for s in alone)
    if fmt == "ts":
        assert len([s for s in got if s["metric"] == "net_rtt_seconds"]) == 4


def test_syslog_lines_name_their_host() -> None:
    """``iostat -d 1 | logger -t iostat`` read back from /var/log/syslog (rsyslog's
    traditional file format: ``%TIMESTAMP% %HOSTNAME% %syslogtag%%msg%``; logger sends no
    blank line): lines of a real capture made here (ts_iostat_d_iso.txt), as rsyslog writes
    them, from two hosts."""
    out = []
    for k, line in enumerate(text("ts_iostat_d_iso.txt").splitlines()):
        rest = line[20:]
        if not rest.strip():
            continue
        for host, pid in (("db1", 812), ("db2", 977)):
            out.append(f"Nov {26:2d} 22:57:{29 + k // 5:02d} {host} iostat[{pid}]: {rest}")
    shape, classes = registry.choose_stream("\n".join(out))
    assert shape == PrefixShape("syslog", "syslog") and classes == [IostatParser]
    streams = HostStreams(classes, shape, reference=_stamp("2026-12-01", "%Y-%m-%d"))
    samples = streams.feed_text("\n".join(out)) + streams.finish()
    check_invariants(samples)
    assert streams.hosts() == ["db1", "db2"]
    assert {s.t for s in samples} == {_stamp("2026-11-26 22:57:29", "%Y-%m-%d %H:%M:%S"),
                                      _stamp("2026-11-26 22:57:30", "%Y-%m-%d %H:%M:%S"),
                                      _stamp("2026-11-26 22:57:31", "%Y-%m-%d %H:%M:%S")}
    assert len(samples) == 2 * 3 * 4


def test_warnings_name_the_files_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    lines = text("pdsh_iostat_x.txt").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("n3: vda"))
    lines[at] = lines[at].rsplit(" ", 1)[0] + " bad"
    path = tmp_path / "cut.txt"
    path.write_text("\n".join(lines) + "\n")
    assert main(["parse", str(path)]) == 0
    err = capsys.readouterr().err
    assert f"cut.txt:{at + 1}: bad value" in err


def test_plain_outputs_have_no_prefix() -> None:
    """Every other fixture, corpus file and seed is read as before: no shape is found in it
    (a tool's own stamps, iostat's ``Device:`` and fio's ``Jobs:`` lines are no prefixes)."""
    checked = 0
    for path in [*sorted(FIXTURES.rglob("*")), *sorted(SEEDS.glob("*.txt"))]:
        if not path.is_file() or PREFIXED in path.parents or path.suffix in (".py", ".btr",
                                                                              ".zst", ".png"):
            continue
        head = path.read_bytes()[:registry.DETECT_HEAD_BYTES].decode("utf-8", "replace")
        # (the structural look first: detection of the whole head is only needed past it)
        assert find_prefixes(head) is None or registry.choose_stream(head)[0] is None, path
        checked += 1
    assert checked > 150


def test_import_pdsh_output_is_one_host_each(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.btr"
    assert main(["import", str(PREFIXED / "pdsh_iostat_x.txt"), str(PREFIXED /
                 "pdsh_fio_text.txt"), "--step", "randread", "-o", str(out)]) == 0
    capsys.readouterr()
    with SessionReader.open(str(out)) as reader:
        samples = list(reader.samples())
        outputs = [r for _, r in reader.timed_records(reader.start, reader.end + 1)
                   if isinstance(r, OutputLines)]
    per_host = {h: {s.tool for s in samples if s.host == h} for h in ("n1", "n2", "n3", "n4")}
    assert per_host == {"n1": {"iostat", "fio"}, "n2": {"iostat", "fio"},
                        "n3": {"iostat", "fio"}, "n4": {"iostat"}}
    # the raw text replay shows is each host's own output, prefixes removed
    raw = {o.host: o.lines for o in outputs}
    assert raw["n4"][0].startswith("Linux ") and not any(x.startswith("n4: ") for x in raw["n4"])
    # plain output with no host named anywhere still needs --host
    assert main(["import", str(PREFIXED / "ts_iostat_d_iso.txt"), "--step", "s", "-o",
                 str(tmp_path / "t.btr")]) == 2
    assert "--host may be left out where every line names its host" in capsys.readouterr().err


def test_stdin_stream_with_prefixes_and_garbage(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """``benchtui parse -``: pdsh's lines read as they come (each host its own), and a stream
    nothing knows still ends in one sentence, exit 1."""

    def run(data: bytes, *args: str) -> int:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        return main(["parse", *args, "-"])

    data = (PREFIXED / "pdsh_iostat_x.txt").read_bytes()
    for args in ((), ("--tool", "iostat")):
        assert run(data, *args) == 0
        got = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
        assert sorted({s["host"] for s in got}) == ["n1", "n2", "n3", "n4"]
        assert len(got) == 300
    assert run(b"n1: hello\nn2: world\n") == 1
    assert capsys.readouterr().err.startswith("benchtui: nothing in - could be read")


def test_stamp_seconds_are_calendar_timegm_s() -> None:
    """A stamp's fields give the seconds ``calendar.timegm`` gives (with the fraction),
    over leap years, century years, the epoch's edges, a leap second, a day past the
    month's end (counted on, as timegm does) and years out of range."""
    fields = [(y, m, d, h, mi, s) for y in (1, 4, 100, 1600, 1900, 1969, 1970, 2000, 2024,
                                            2100, 9999)
              for m in range(1, 13) for d in (1, 28, 29, 30, 31) for h, mi, s in
              ((0, 0, 0), (23, 59, 59), (12, 30, 60))]
    for f in [*fields, (0, 1, 1, 0, 0, 0), (10000, 1, 1, 0, 0, 0)]:
        try:
            expected: float | None = calendar.timegm((*f, 0, 0, 0)) + 0.5
        except (OverflowError, ValueError):
            expected = None
        assert _utc(f, 0.5) == expected, f
