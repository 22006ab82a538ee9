"""``benchtui report --format html`` on a session recorded with real fio
(tests/report_recording.py) and on seed 000 imported: one self-contained file (nothing to
fetch), the Markdown format's tables cell for cell, the plots of every run as inline SVG with
a line per host, each host's steadiness beside them, the hosts' facts; and the page as
Chromium draws it."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import xml.etree.ElementTree as ET
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from benchtui.store.recording import SessionReader
from tests.page_layout import CHROMIUM
from tests.report_recording import HOSTS, ROOT, SKIP, benchtui, report_session

SVG = "{http://www.w3.org/2000/svg}"
SEED000 = ROOT / "tests/fixtures/seeds/000_217b3b91532e58e6.txt"


class _Tables(HTMLParser):
    """The cells' text of every ``<table class="values">`` (a header on two rows, the
    overview's steps over their figures, as the one row the Markdown has: "<step>
    <figure>"), and the ``<li>`` texts inside each ``<div class="steady">``."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.steady: list[str] = []
        self._in_values = False
        self._in_head = False
        self._heads: list[list[tuple[str, int, int]]] = []
        self._span = (1, 1)
        self._cell: list[str] | None = None
        self._steady_li: list[str] | None = None
        self._steady_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        cls = found.get("class") or ""
        if tag == "table" and cls == "values":
            self._in_values = True
            self._heads = []
            self.tables.append([])
        elif self._in_values and tag == "thead":
            self._in_head = True
        elif self._in_values and tag == "tr":
            (self._heads if self._in_head else self.tables[-1]).append([])
        elif self._in_values and tag in ("td", "th"):
            self._cell = []
            self._span = (int(found.get("colspan") or 1), int(found.get("rowspan") or 1))
        elif tag == "div" and cls == "steady":
            self._steady_depth = 1
        elif self._steady_depth and tag == "div":
            self._steady_depth += 1
        elif self._steady_depth and tag == "li":
            self._steady_li = [cls + ":"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "table" and self._in_values:
            self._in_values = False
            self.tables[-1].insert(0, _flat_head(self._heads))
        elif tag == "thead":
            self._in_head = False
        elif self._cell is not None and tag in ("td", "th"):
            text = "".join(self._cell)
            if self._in_head:
                self._heads[-1].append((text, *self._span))
            else:
                self.tables[-1][-1].append(text)
            self._cell = None
        elif self._steady_depth and tag == "div":
            self._steady_depth -= 1
        elif self._steady_li is not None and tag == "li":
            self.steady.append("".join(self._steady_li))
            self._steady_li = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._steady_li is not None:
            self._steady_li.append(data)


def _flat_head(rows: list[list[tuple[str, int, int]]]) -> list[str]:
    """A header of one or two rows as one: a cell over several columns prefixed to each of
    the cells under it; a cell over both rows as it is."""
    if len(rows) == 1:
        return [text for text, _cols, _rows in rows[0]]
    under = iter(text for text, _cols, _rows in rows[1])
    out: list[str] = []
    for text, cols, spans_rows in rows[0]:
        if spans_rows == 2:
            out.append(text)
        else:
            out += [f"{text} {next(under)}" for _ in range(cols)]
    return out


def md_tables(text: str) -> list[list[list[str]]]:
    tables: list[list[list[str]]] = []
    previous = ""
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous.startswith("|"):
                tables.append([])
            if not re.fullmatch(r"\|(---\|)+", line):
                cells = re.split(r"(?<!\\) \| ", line[2:-2])
                tables[-1].append([c.replace("\\|", "|") for c in cells])
        previous = line
    return tables


def assert_self_contained(page: str) -> None:
    lowered = page.lower()
    for banned in ('src="http', "src='http", "<link", "<script", "@import", "url(http",
                   "<iframe", "<img src=\"http"):
        assert banned not in lowered, banned
    # the only absolute URLs are the inline SVGs' XML namespace names (never fetched)
    for m in re.finditer(r"https?://[^\s\"'<>)]+", page):
        before = page[max(0, m.start() - 20):m.start()]
        assert re.search(r'xmlns(:\w+)?="$', before), (before, m.group())


def inline_svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(m.group()) for m in re.finditer(r"<svg\b.*?</svg>", page, re.S)]


def texts(svg: ET.Element) -> list[str]:
    return ["".join(e.itertext()).strip() for e in svg.iter(f"{SVG}text")]


def line_ids(svg: ET.Element) -> list[str]:
    return [e.get("id", "") for e in svg.iter(f"{SVG}g") if "-line-" in e.get("id", "")]


@pytest.fixture(scope="module")
def session() -> Path:
    return report_session()


@pytest.fixture(scope="module")
def page(session: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("html") / "report.html"
    done = benchtui("report", str(session), "--baseline", "host=alpha", "--skip", SKIP,
                    "--select", "all", "--format", "html", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_the_page_is_one_file_with_nothing_to_fetch(page: Path) -> None:
    assert [p.name for p in page.parent.iterdir()] == ["report.html"]
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    assert_self_contained(text)
    # every id is the page's own (matplotlib names each figure's groups alike)
    ids = re.findall(r' id="([^"]+)"', text)
    assert len(ids) == len(set(ids))


def test_tables_are_the_markdown_tables_cell_for_cell(session: Path, page: Path) -> None:
    done = benchtui("report", str(session), "--baseline", "host=alpha", "--skip", SKIP,
                    "--select", "all")
    assert done.returncode == 0, done.stderr
    expected = md_tables(done.stdout)
    # the steadiness column is a mark in the page (its sentence on hover and in the box)
    steady = expected[1][0].index("steady")
    for row in expected[1][1:]:
        row[steady] = "✓" if row[steady] == "yes" else "✗ no" if row[steady].startswith(
            "NO") else row[steady]
    parser = _Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    assert len(expected) == 3  # the overview, randread, randrw
    assert parser.tables == expected
    # percentages of the baseline are there: alpha's own are 100%
    assert any(c.endswith("(100%)") for row in parser.tables[1] for c in row)


def test_every_run_has_its_plots_with_a_line_per_host(page: Path) -> None:
    svgs = inline_svgs(page.read_text(encoding="utf-8"))
    # the bars, then IOPS, bandwidth and latency of randread, randrw run 1 and run 2, each
    # with the fleet's latency percentiles
    assert len(svgs) == 1 + 3 * 4
    bars, timeseries = svgs[0], svgs[1:]
    bar_texts = texts(bars)
    for name in ("alpha", "beta", "alpha (run 1)", "beta (run 2)", "the baseline",
                 "randread", "randrw"):
        assert name in bar_texts, (name, bar_texts)
    for i, svg in enumerate(timeseries):
        found = texts(svg)
        ops = 1 if i < 4 else 2  # randread reads; randrw reads and writes
        assert "seconds since the tool started" in found
        if i % 4 == 3:  # the fleet's p50, p99 and p99.9 of the merged histograms
            assert "fleet read" in found, (i, found)
            assert len(line_ids(svg)) == ops * 3, (i, line_ids(svg))
            continue
        for host in HOSTS:  # in the legend; latency: each host's own panel ("alpha read")
            assert host in found or f"{host} read" in found, (i, found)
        lines = 3 if i % 4 == 2 else 1  # latency: p50, p99 and p99.9
        assert len(line_ids(svg)) == len(HOSTS) * ops * lines, (i, line_ids(svg))


def test_steadiness_is_beside_each_runs_plots(page: Path) -> None:
    parser = _Tables()
    parser.feed(page.read_text(encoding="utf-8"))
    # randread (9 s window): a verdict per host; randrw's 3 s runs: too short for one
    randread = parser.steady[:2]
    assert [v.split(":")[1] for v in randread] == list(HOSTS)
    assert all(v.startswith(("yes:", "no:")) for v in randread), randread
    assert all("CV " in v for v in randread)
    assert all(v.startswith("unknown:") for v in parser.steady[2:]) and parser.steady[2:]


def test_the_hosts_facts_are_on_the_page(session: Path, page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    hosts = text[text.index('<section id="hosts">'):]
    with SessionReader.open(str(session)) as reader:
        facts = reader.meta.facts
    for host in HOSTS:
        assert f"<th>{host}</th>" in hosts
        assert str(facts[host]["kernel"]) in hosts and str(facts[host]["cpu_count"]) in hosts
    assert "<th>block_devices</th>" in hosts and "<th>tools</th>" in hosts


@pytest.fixture(scope="module")
def seed000_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("seed000")
    done = benchtui("import", str(SEED000), "--map", "examples/import/seed000.toml", "-o",
                    str(work / "seed000.btr"))
    assert done.returncode == 0, done.stderr
    done = benchtui("report", str(work / "seed000.btr"), "--baseline", "host=物理机",
                    "--format", "html", "-o", str(work / "seed000.html"))
    assert done.returncode == 0, done.stderr
    return work / "seed000.html"


def test_an_imported_report_has_its_cjk_hosts_in_tables_and_bars(seed000_page: Path) -> None:
    text = seed000_page.read_text(encoding="utf-8")
    assert_self_contained(text)
    parser = _Tables()
    parser.feed(text)
    overview = parser.tables[0]
    assert overview[1][:3] == ["物理机", "195 (100%)", "782 KiB/s (100%)"]
    assert overview[9][:2] == ["Windows虚拟机(cache=writeback,queues=4)", "4.52k (2318%)"]
    svgs = inline_svgs(text)
    # bar charts only (a chart per group of steps of one scale): no per-second series
    assert svgs and all("bar-0" in ET.tostring(svg, encoding="unicode") for svg in svgs)
    bar_texts = [t for svg in svgs for t in texts(svg)]
    assert "物理机" in bar_texts and "4KB随机读" in bar_texts and "the baseline" in bar_texts
    assert "no per-second series to plot" in text
    assert "No host facts were recorded (imported" in text


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows of an 8-bit RGB or RGBA, non-interlaced PNG (what
    Chromium writes), unfiltered."""
    width, height = struct.unpack(">II", data[16:24])
    depth, colour, _c, _f, interlace = data[24:29]
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + b) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[x] = (line[x] + pred) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, [bytes(r) for r in rows]


@pytest.mark.slow
def test_chromium_draws_the_tables_and_plots(page: Path, tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (scripts/setup test installs the Debian "
                    "package chromium as root): the page is not drawn")
    shot = tmp_path / "page.png"
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--screenshot={shot}", "--window-size=1400,3000",
                           page.as_uri()], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, rows = png_pixels(shot.read_bytes())
    assert (width, height) == (1400, 3000)
    bpp = len(rows[0]) // width
    colours: set[bytes] = set()
    inked = 0
    for row in rows[::4]:
        for x in range(0, len(row), bpp * 4):
            px = row[x:x + 3]
            colours.add(px)
            inked += px != b"\xff\xff\xff"
    sampled = len(rows[::4]) * len(range(0, len(rows[0]), bpp * 4))
    # text, table shading, plot lines in each host's colour: not a blank or one-colour page
    assert len(colours) > 100, len(colours)
    assert inked / sampled > 0.05, inked / sampled
    # the hosts' colours (matplotlib's first two) are drawn somewhere: the plots are there
    assert any(abs(p[0] - 0x1f) < 8 and abs(p[1] - 0x77) < 8 and abs(p[2] - 0xb4) < 8
               for p in colours)
    assert any(abs(p[0] - 0xff) < 8 and abs(p[1] - 0x7f) < 8 and abs(p[2] - 0x0e) < 8
               for p in colours)
