"""Where a session file's bytes go: what each frame kind costs on disk, and within the DATA
frames what each part of a frame body costs (issue 32: "the bytes accounted for").

The file is walked frame by frame (``store/recording/format.py``): every frame's header (44
bytes) and payload are counted under its kind (META, DATA, STATS, FIGS, SEGMENT_END, INDEX),
with the file header and the trailer. A segment's DATA payloads are one zstd stream, so the
share of each part of a frame body (definitions, record table, series ids, times, value tags,
values by encoding, histograms, events, raw text) cannot be read off the file: each part is
given its bytes before compression, and its bytes when the segment's parts of that kind are
compressed alone at the writer's zstd level ("alone"), whose sum is set beside the DATA
frames' real payload.

    .venv/bin/python benchmarks/recording_bytes.py SESSION.btr [--hours H --hosts N]

``recording_size.py`` runs it on the reference hour and writes its table into
docs/benchmarks/recording.md.
"""

from __future__ import annotations

import argparse
import mmap
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchtui.store.recording import format as fmt  # noqa: E402
from benchtui.store.recording.codec import RAW  # noqa: E402
from benchtui.store.recording.varint import get_blob, get_list, get_uvarint  # noqa: E402

KINDS = {fmt.META: "META", fmt.DATA: "DATA", fmt.SEGMENT_END: "SEGMENT_END",
         fmt.INDEX: "INDEX", fmt.STATS: "STATS", fmt.FIGS: "FIGS"}
#: The parts of a DATA frame body, in their order in it.
PARTS = ("definitions (strings, series)", "record table (kinds, times, counts)",
         "series ids", "sample times", "sample elapsed", "value tags", "values: integers",
         "values: decimals", "values: fio buckets", "values: raw f64", "histograms",
         "events (JSON)", "raw output text", "durations")


def body_parts(body: bytes) -> dict[str, bytes]:
    """A DATA frame body cut into its parts (docs/session-format.md, "Frame body")."""
    ends: list[int] = []
    _defs, p = get_blob(body, 0)
    ends.append(p)
    n, p = get_uvarint(body, p)
    p += n + 8 * n  # the records' kinds and times
    _rec, p = get_blob(body, p)
    ends.append(p)
    sids, p = get_blob(body, p)
    ends.append(p)
    n_samples = len(get_list(sids, 0)[0])
    for _ in range(2):  # times, elapsed: distinct values, then each sample's index
        count, p = get_uvarint(body, p)
        _idx, p = get_blob(body, p + 8 * count)
        ends.append(p)
    tags = body[p:p + n_samples]
    p += n_samples
    ends.append(p)
    for _ in range(3):  # integers, decimals, fio buckets
        _b, p = get_blob(body, p)
        ends.append(p)
    p += 8 * sum(1 for tag in tags if tag & 0x7F == RAW)
    ends.append(p)
    for _ in range(3):  # histograms, events, output text
        _b, p = get_blob(body, p)
        ends.append(p)
    ends.append(len(body))  # the durations blob, when there is one
    starts = [0, *ends[:-1]]
    return {name: body[a:b] for name, a, b in zip(PARTS, starts, ends, strict=True)}


def _frames(data: mmap.mmap) -> Iterator[fmt.FrameHeader]:
    pos = fmt.FILE_HEADER_SIZE
    while pos < len(data):
        h = fmt.read_frame_header(data, pos, pos)
        if h is None:
            return
        yield h
        pos = h.end


def data_bodies(path: Path) -> list[list[bytes]]:
    """Every segment's DATA frame bodies, decompressed, in order."""
    out: list[list[bytes]] = []
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        stream = None
        for h in _frames(data):
            if h.type != fmt.DATA:
                continue
            if stream is None:
                stream = zstandard.ZstdDecompressor().decompressobj()
                out.append([])
            body = stream.decompress(data[h.payload_offset:h.end])
            if body:
                out[-1].append(body)
            if h.flags & fmt.LAST:
                stream = None
    return out


def account(path: Path, level: int = 3) -> dict[str, object]:
    """{"frames": kind -> (count, header bytes, payload bytes), "parts": part -> (raw bytes,
    compressed alone), "size": file size}."""
    frames: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size = len(data)
        frames["file header"] = [1, fmt.FILE_HEADER_SIZE, 0]
        end = fmt.FILE_HEADER_SIZE
        for h in _frames(data):
            entry = frames[KINDS.get(h.type, f"type {h.type}")]
            entry[0] += 1
            entry[1] += fmt.FRAME_HEADER_SIZE
            entry[2] += h.payload_len
            end = h.end
        if size - end == fmt.TRAILER_SIZE:
            frames["trailer"] = [1, fmt.TRAILER_SIZE, 0]
    raw_parts: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    cctx = zstandard.ZstdCompressor(level=level)
    for bodies in data_bodies(path):
        segment: dict[str, bytearray] = defaultdict(bytearray)
        for body in bodies:
            for name, part in body_parts(body).items():
                segment[name] += part
        for name, part in segment.items():
            raw_parts[name] += len(part)
            alone[name] += len(cctx.compress(bytes(part))) if part else 0
    return {"frames": {k: tuple(v) for k, v in frames.items()},
            "parts": {p: (raw_parts[p], alone[p]) for p in PARTS if raw_parts[p]},
            "size": size}


def tables(found: dict[str, object], host_hours: float) -> list[str]:
    """The two Markdown tables of ``account``'s result, in MB per host-hour."""
    size = float(found["size"])  # type: ignore[arg-type]
    frames: dict[str, tuple[int, int, int]] = found["frames"]  # type: ignore[assignment]
    parts: dict[str, tuple[int, int]] = found["parts"]  # type: ignore[assignment]

    def mb(n: float) -> str:
        return f"{n / 1e6 / host_hours:.3f}"

    out = ["| frame kind | frames | headers (MB/host-hour) | payloads (MB/host-hour) | "
           "share of the file |", "|---|---|---|---|---|"]
    for kind, (count, head, payload) in sorted(frames.items(), key=lambda kv: -sum(kv[1][1:])):
        out.append(f"| {kind} | {count:,} | {mb(head)} | {mb(payload)} | "
                   f"{(head + payload) / size:.1%} |")
    out.append(f"| **the file** | | | **{mb(size)}** | 100% |")
    data_payload = frames.get("DATA", (0, 0, 0))[2]
    total_alone = sum(a for _r, a in parts.values()) or 1
    out += ["", "| DATA frame body part | before compression (MB/host-hour) | compressed "
            "alone (MB/host-hour) | share of the parts compressed alone |",
            "|---|---|---|---|"]
    for name, (raw, alone) in sorted(parts.items(), key=lambda kv: -kv[1][1]):
        out.append(f"| {name} | {mb(raw)} | {mb(alone)} | {alone / total_alone:.1%} |")
    out.append(f"| **all parts** | {mb(sum(r for r, _a in parts.values()))} | "
               f"{mb(total_alone)} (the DATA payloads, compressed as one stream a segment: "
               f"{mb(data_payload)}) | |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("session", type=Path)
    ap.add_argument("--hosts", type=int, default=1)
    ap.add_argument("--hours", type=float, default=None,
                    help="host-hours the file covers (default: from its records)")
    args = ap.parse_args()
    hours = args.hours
    if hours is None:
        from benchtui.store.recording import SessionReader

        with SessionReader.open(str(args.session)) as r:
            hours = (r.end - r.start) / 3600
    print("\n".join(tables(account(args.session), args.hosts * hours)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
