"""What it costs to send a parsed document's samples from a parser worker to the main process
(``session/parse_worker.py``), per 32-job fio json+ document of the real capture
(``benchmarks/captures/fio-json-plus-32jobs-20s.json.xz``): parsing it (for scale), and each
wire format's encoding (in the worker) and decoding (in the main process, on the event loop).

- ``pickle``: the ``Answer`` with its list of ``Sample`` objects, highest protocol;
- ``pickle tuples`` (chosen: ``parse_worker.answer_frame``): each sample as a tuple of its
  fields, made into ``Sample`` objects again after decoding;
- ``marshal tuples``: the same tuples with ``marshal`` (the histograms, objects, pickled apart).

    .venv/bin/python benchmarks/parse_wire.py [--repeat 5]

Prints the best of ``--repeat`` rounds over the capture's documents, in ms per document.
"""

from __future__ import annotations

import argparse
import lzma
import marshal
import pickle
import time
from pathlib import Path

from benchtui.model.sample import Sample
from benchtui.parsers import registry
from benchtui.session.parse_worker import LENGTH, Answer, answer_frame, read_answer

CAPTURE = Path(__file__).resolve().parent / "captures" / "fio-json-plus-32jobs-20s.json.xz"
FIELDS = Sample.__slots__  # (the fields, in order)


def documents() -> list[bytes]:
    data = lzma.decompress(CAPTURE.read_bytes())
    starts = [i + 1 for i in range(len(data)) if data.startswith(b"\n{\n", i)] + [len(data)]
    return [data[a:b] for a, b in zip([0, *starts[1:-1]], starts[1:], strict=True)]


def best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    docs = documents()
    per_doc: list[list[Sample]] = []

    def parse() -> None:
        per_doc.clear()
        parser = registry.all_parsers()["fio-json"](host="h1", source="h1:fio")
        parser.stream = True
        for d in docs:
            per_doc.append(parser.feed_bytes(d, 1.0))

    n = len(docs)
    print(f"{n} documents; parsing: {best(parse, args.repeat) / n * 1e3:.2f} ms per document; "
          f"{sum(map(len, per_doc)) / n:.0f} samples per document")
    formats = {
        "pickle": (lambda ss: pickle.dumps(Answer(1, ss), pickle.HIGHEST_PROTOCOL),
                   lambda b: pickle.loads(b).samples),
        "pickle tuples (the worker's: answer_frame, read_answer)": (
            lambda ss: answer_frame(Answer(1, ss)),
            lambda b: read_answer(b[LENGTH.size:]).samples),
        "marshal tuples": (
            lambda ss: (marshal.dumps([tuple(getattr(s, f) for f in FIELDS if f != "histogram")
                                       for s in ss]),
                        pickle.dumps([s.histogram for s in ss], pickle.HIGHEST_PROTOCOL)),
            lambda b: [Sample(*t[:8], h, t[8]) for t, h in zip(
                marshal.loads(b[0]), pickle.loads(b[1]), strict=True)]),
    }
    for name, (encode, decode) in formats.items():
        encoded: list[object] = []
        enc = best(lambda e=encode, out=encoded: out.__setitem__(  # type: ignore[misc]
            slice(None), [e(s) for s in per_doc]), args.repeat)
        dec = best(lambda d=decode, got=encoded: [d(b) for b in got], args.repeat)
        size = sum(len(b) if isinstance(b, bytes) else len(b[0]) + len(b[1])  # type: ignore[index]
                   for b in encoded) / n
        assert [decode(b) for b in encoded] == per_doc
        print(f"{name}: encode {enc / n * 1e3:.2f} ms, decode {dec / n * 1e3:.2f} ms, "
              f"{size / 1e3:.0f} kB per document")


if __name__ == "__main__":
    main()
