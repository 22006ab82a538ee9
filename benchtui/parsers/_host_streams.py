"""The parsers of one stream whose lines may carry prefixes (``_prefixes``): a set of parsers per
host the lines name, fed each line without its prefix and with its stamp as its time.

``pdsh -w n[1-4] iostat -x 1`` interleaves four iostat streams line by line; each host's lines,
prefix removed, go to that host's own parsers (made when the host first appears, named after
it), so its reports, runs and state are its own, as if its output had been saved alone. Lines
without a prefix (pdsh's own ``pdsh@admin: n3: ssh exited ...``, a report's text around the
output) go to the parsers of ``host`` (the caller's: ``--host``). A line's stamp (a logger's,
``ts``'s) is passed to the parsers as the line's time, what a live session passes as the time a
line was received: a tool that prints its own clock (iostat -t, fio's JSON timestamps) keeps it.

Consecutive lines of one host and one time go to the parsers as one block (``feed_text``): the
cost of the prefixes is one regular expression match a line. Without a prefix shape the stream
is one set of parsers fed as it is, as ``benchtui parse`` always fed them.

Pure: no I/O (a private module of ``parsers``; the registry skips it).
"""

from __future__ import annotations

from collections.abc import Sequence

from benchtui.model.sample import Sample
from benchtui.parsers._prefixes import LinePrefixes, PrefixShape
from benchtui.parsers.base import Parser, ParseWarning


class HostStreams:
    """``classes`` run over one stream: one instance of each per host its lines name."""

    def __init__(self, classes: Sequence[type[Parser]], shape: PrefixShape | None, *,
                 host: str = "-", source: str = "-", histograms: bool = True,
                 reference: float | None = None) -> None:
        self.classes = list(classes)
        self.host = host
        self.source = source
        self.histograms = histograms
        self.prefixes = None if shape is None else LinePrefixes(shape, reference)
        #: host -> its parsers (one per class), in the order the hosts first appeared
        self.by_host: dict[str, list[Parser]] = {}
        self._next_line = 1

    @property
    def parsers(self) -> list[Parser]:
        """Every parser made so far (the caller's host's first, when it has lines)."""
        return [p for parsers in self.by_host.values() for p in parsers]

    @property
    def warnings(self) -> list[ParseWarning]:
        return [w for p in self.parsers for w in p.warnings]

    @property
    def unknown_lines(self) -> int:
        """Lines no parser of a class knew, the fewest over the classes."""
        if not self.by_host or not self.classes:
            return 0
        return min(sum(parsers[k].unknown_lines for parsers in self.by_host.values())
                   for k in range(len(self.classes)))

    def hosts(self) -> list[str]:
        return list(self.by_host)

    def _parsers(self, host: str) -> list[Parser]:
        parsers = self.by_host.get(host)
        if parsers is None:
            parsers = self.by_host[host] = [cls(host=host, source=self.source)
                                            for cls in self.classes]
            for p in parsers:
                p.histograms = self.histograms
        return parsers

    def feed_text(self, text: str, first_line: int | None = None) -> list[Sample]:
        """A block of whole lines; ``first_line``: the number of its first line in the source
        (default: the line after the previous block's), for the parsers' warnings."""
        if first_line is not None:
            self._next_line = first_line
        start = self._next_line
        self._next_line += text.count("\n") + 1
        if self.prefixes is None:
            return self._feed(self.host, None, text, start)
        out: list[Sample] = []
        split = self.prefixes.split
        block: list[str] = []
        key: tuple[str | None, float | None] = (None, None)
        block_start = start
        for n, line in enumerate(text.split("\n"), start):
            host, t, rest = split(line)
            if (host, t) != key:
                if block:
                    out.extend(self._feed(key[0] or self.host, key[1], "\n".join(block),
                                          block_start))
                block = []
                key = (host, t)
                block_start = n
            block.append(rest)
        if block:
            out.extend(self._feed(key[0] or self.host, key[1], "\n".join(block), block_start))
        return out

    @property
    def takes_bytes(self) -> bool:
        """Raw chunks can go to ``feed_bytes``: no line prefixes, and every class takes bytes
        (fio-json finds its documents on the bytes)."""
        return self.prefixes is None and bool(self.classes) and all(
            cls.takes_bytes for cls in self.classes)

    def feed_bytes(self, data: bytes) -> list[Sample]:
        """A chunk of the stream cut anywhere (only when ``takes_bytes``)."""
        out: list[Sample] = []
        for p in self._parsers(self.host):
            out.extend(p.feed_bytes(data))
        return out

    def feed(self, line: str) -> list[Sample]:
        """One line (a trailing newline is stripped), as read from a live stream."""
        return self.feed_text(line.rstrip("\n"))

    def finish(self) -> list[Sample]:
        out: list[Sample] = []
        for p in self.parsers:
            out.extend(p.finish())
        return out

    def _feed(self, host: str, t: float | None, text: str, first_line: int) -> list[Sample]:
        out: list[Sample] = []
        for p in self._parsers(host):
            p.lineno = first_line - 1
            out.extend(p.feed_text(text, t))
        return out
