"""``benchtui import`` reads its files a block at a time and keeps runs compact until it
writes them (issue 29; ``import_text``, ``import_store``, ``import_timeline``): the session
is the same whatever the sizes of the blocks and chunks, and every sample is where the
placing rules put it (docs/import.md, "Times"), sorted by its place with ties in the order
the parser gave them, however out of order the output was (a clock that went back, several
fio runs in one file). The reference here places the parser's own samples, held whole, as
the importer did before it streamed."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from benchmarks.iostat_speed import generate
from benchtui.model.events import OutputLines
from benchtui.model.sample import Sample
from benchtui.parsers._flattened import restore_line_breaks
from benchtui.parsers.base import decode_output
from benchtui.parsers.fio_text import FioTextParser
from benchtui.parsers.iostat import IostatParser
from benchtui.session import import_store, import_text
from benchtui.session.import_map import load_map, split_pieces
from benchtui.session.importer import import_outputs
from benchtui.store.recording import SessionReader

FIXTURES = Path(__file__).parent / "fixtures"
SEED000 = FIXTURES / "seeds" / "000_217b3b91532e58e6.txt"
SEED001 = FIXTURES / "seeds" / "001_82a32511c661f41a.txt"
MAP000 = Path(__file__).parent.parent / "examples" / "import" / "seed000.toml"
FIO_RUNS = FIXTURES / "fio_text" / "seed000_linux_none.txt"
T0 = 1_800_000_000.0


@pytest.fixture
def tiny(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 97 bytes, chunks of 5 samples and of 200 characters of text: every
    boundary falls somewhere."""
    monkeypatch.setattr(import_text, "BLOCK_BYTES", 97)
    monkeypatch.setattr(import_store, "CHUNK", 5)
    monkeypatch.setattr(import_store, "TEXT_CHUNK", 200)


def read_lines(path: Path) -> list[str]:
    return [line for _n, lines, _f in import_text.TextFile(str(path), hint="").blocks()
            for line in lines]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 4096])
def test_blocks_anywhere_give_the_lines_parse_reads(tmp_path: Path, size: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """UTF-8 with characters cut by a block's end, UTF-16 with a BOM, CRLF, bytes that do not
    decode, a BOM, a flattened report (seed 001: one line of 25,000 characters)."""
    monkeypatch.setattr(import_text, "BLOCK_BYTES", size)
    texts = {"utf8.txt": "\ufeffé中文\r\nline 2\n\nlast".encode() + b"\xff\xfe bad\n",
             "utf16.txt": codecs.BOM_UTF16_LE + "x 中\nyz\n".encode("utf-16-le"),
             "empty.txt": b"", "seed001.txt": SEED001.read_bytes()}
    for name, data in texts.items():
        path = tmp_path / name
        path.write_bytes(data)
        want = restore_line_breaks(decode_output(data)).split("\n")
        assert read_lines(path) == want, name


def _session(path: Path) -> tuple[list[tuple[object, ...]], list[object], list[str]]:
    """The samples (as dump gives them), the events and the raw text of a session."""
    with SessionReader.open(str(path)) as r:
        samples = [(s.t, s.host, s.metric, s.value, type(s.value), s.labels, s.elapsed,
                    s.duration, None if s.histogram is None else dict(s.histogram.counts))
                   for s in r.samples()]
        events = [(e.t, e.kind, e.host, e.step, e.data,
                   e.message if e.kind != "session_start" else "(its id)") for e in r.events()]
        text = [line for _t, o in r.timed_records(r.start, r.end + 1)
                if isinstance(o, OutputLines) for line in o.lines]
    return samples, events, text


def test_tiny_blocks_and_chunks_make_the_same_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 000 cut by its map (54 runs, fio's disk statistics pasted under the next step),
    fio json+ output with histograms, and pdsh's output of four hosts in two files (iostat,
    fio: each host's lines a stream of its own, a host's runs merged over the files),
    imported with the usual sizes and with tiny ones."""
    json_plus = FIXTURES / "fio_json" / "randread_randwrite.jsonplus.txt"
    pdsh = [str(FIXTURES / "prefixed" / f) for f in ("pdsh_iostat_x.txt", "pdsh_fio_text.txt")]
    got = []
    for name in ("usual", "tiny"):
        if name == "tiny":
            monkeypatch.setattr(import_text, "BLOCK_BYTES", 97)
            monkeypatch.setattr(import_store, "CHUNK", 5)
            monkeypatch.setattr(import_store, "TEXT_CHUNK", 200)
        a, b, c = (tmp_path / f"{name}-{x}.btr" for x in ("000", "json", "pdsh"))
        import_outputs([str(SEED000)], str(a), import_map=load_map(str(MAP000)), start=T0)
        import_outputs([str(json_plus)], str(b), hosts=["h"], steps=["s"], start=T0)
        import_outputs(pdsh, str(c), steps=["s"], start=T0)
        got.append((_session(a), _session(b), _session(c)))
    (seed_usual, json_usual, pdsh_usual), (seed_tiny, json_tiny, pdsh_tiny) = got
    assert seed_tiny == seed_usual and json_tiny == json_usual and pdsh_tiny == pdsh_usual
    assert {s[1] for s in pdsh_usual[0]} == {"n1", "n2", "n3", "n4"}
    assert len(seed_usual[0]) > 1000
    assert any(s[-1] for s in json_usual[0])  # histograms came back


def _placed(samples: list[Sample], step: str) -> list[tuple[object, ...]]:
    """The importer's rules on samples held whole: a run's clock times from its first,
    ``elapsed`` as it is, neither at the run's end; sorted by place, ties in order."""
    clocked = [s.t for s in samples if s.t is not None and s.elapsed is None]
    first = min(clocked, default=0.0)
    offsets = [max(s.elapsed, 0.0) if s.elapsed is not None else
               None if s.t is None else s.t - first for s in samples]
    span = max((o for o in offsets if o is not None), default=0.0) or 10.0
    placed = [span if o is None else o for o in offsets]
    order = sorted(range(len(samples)), key=placed.__getitem__)
    return [(T0 + placed[i], samples[i].metric, samples[i].value,
             {**samples[i].labels, "step": step}) for i in order]


@pytest.mark.usefixtures("tiny")
def test_samples_out_of_order_are_placed_in_order(tmp_path: Path) -> None:
    """An iostat log whose clock goes back twice (reports moved), and one file of six fio
    runs (each one's intervals, then its summary at the run's end, then the next run's)."""
    reports = generate(40, 2).split("\n\n\n")
    moved = [*reports[20:30], *reports[:20], *reports[30:]]
    log = tmp_path / "iostat.txt"
    log.write_text("\n\n\n".join(moved), encoding="utf-8")
    for path, parser in ((log, IostatParser), (FIO_RUNS, FioTextParser)):
        out = tmp_path / f"{path.stem}.btr"
        import_outputs([str(path)], str(out), hosts=["h"], steps=["s"], start=T0)
        p = parser(host="h")
        samples = p.feed_text(path.read_text(encoding="utf-8")) + p.finish()
        with SessionReader.open(str(out)) as r:
            got = [(s.t, s.metric, s.value, s.labels) for s in r.samples()]
        assert got == _placed(samples, "s"), path.name
        assert len(got) > 250


@pytest.mark.usefixtures("tiny")
def test_a_run_that_goes_on_into_the_next_piece(tmp_path: Path) -> None:
    """A stream that never tells a second run apart (iostat) gives each piece its own
    samples, also when its output goes on under the next host's marker (the samples of the
    second piece wait until the stream's end says where they go)."""
    reports = generate(30, 2).split("\n\n\n")
    report = tmp_path / "r.md"
    report.write_text("## randread\n\n- a\n\n" + "\n\n\n".join(reports[:12]) + "\n\n- b\n\n"
                      + "\n\n\n".join(reports[12:]), encoding="utf-8")
    imap = tmp_path / "m.toml"
    imap.write_text('[host]\nmarker = "bullet"\n[step]\nmarker = "heading"\n', encoding="utf-8")
    out = tmp_path / "r.btr"
    import_outputs([str(report)], str(out), import_map=load_map(str(imap)), start=T0)
    with SessionReader.open(str(out)) as r:
        hosts = r.host_sample_counts()
    # the reference: the pieces' lines fed to one parser in turn, the end's samples to b
    a, b = split_pieces(report.read_text(encoding="utf-8").split("\n"),
                        load_map(str(imap)), "r.md")
    parser = IostatParser(host="-")
    want = {"a": len(parser.feed_text("\n".join(a.lines)))}
    want["b"] = len(parser.feed_text("\n".join(b.lines))) + len(parser.finish())
    assert hosts == want
    assert want["a"] > 400 and want["b"] > 700
