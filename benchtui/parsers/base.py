"""What every parser is: an incremental, pure line consumer.

A parser is fed the output of one tool run, line by line (``feed``) or in blocks
(``feed_text``), and returns the samples each line completes; ``finish`` flushes what the end
of the stream completes. Parsers do no I/O and read no clock: the time a line was received,
when known, comes in with it (``t``). Unknown lines are skipped and counted; a line that is
recognised but malformed becomes a ``ParseWarning`` (source, line number, reason); no sample
ever carries NaN or infinity, and no input makes a parser raise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from benchtui.model.sample import INTERVAL, Sample

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import ClassVar

#: Longest line kept in a warning, so that binary garbage does not flood the terminal.
_WARN_TEXT_MAX = 80

_VALUE = attrgetter("value")


def decode_output(data: bytes) -> str:
    """Saved tool output as text: UTF-16 with a BOM (fio on Windows redirected by PowerShell)
    or UTF-8; undecodable bytes become U+FFFD instead of failing."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


@dataclass(frozen=True, slots=True)
class ParseWarning:
    """A recognised line that could not be used."""

    source: str
    line: int
    reason: str
    text: str = ""

    def __str__(self) -> str:
        shown = f": {self.text!r}" if self.text else ""
        return f"{self.source}:{self.line}: {self.reason}{shown}"


class NominalInterval:
    """A tool's nominal interval, learnt as the longest interval seen so far in a run (tools
    print their whole intervals first); ``duration`` says whether an interval is a partial one.

    iperf3's last line (``10.00-10.04 sec``) covers 0.04 s: its ``Sample.duration`` is 0.04.
    """

    #: An interval within this share of the nominal one is a whole one (printed rounding).
    TOLERANCE = 0.05

    __slots__ = ("nominal",)

    def __init__(self) -> None:
        self.nominal = 0.0

    def duration(self, seconds: float) -> float | None:
        """``seconds`` when that interval is partial (shorter than the nominal one), else None."""
        if seconds > self.nominal:
            self.nominal = seconds
            return None
        if seconds >= self.nominal * (1 - self.TOLERANCE):
            return None
        return seconds


class Parser:
    """Base class. Subclasses set ``tool`` and implement ``parse_line`` (and maybe ``flush``).

    ``detect`` scores how much a chunk of text looks like this tool's output (0 = not at all,
    100 = certainly), for ``benchtui parse`` without ``--tool``.
    """

    #: The registry name, what ``--tool`` takes: ``fio-json``, ``iostat``, ...
    name: ClassVar[str] = ""
    #: The ``tool`` of the samples produced: ``fio``, ``iostat``, ...
    tool: ClassVar[str] = ""
    #: Parser names whose output looks like this one's: detection keeps only the best of them.
    conflicts: ClassVar[tuple[str, ...]] = ()
    #: Other names users may give with --tool.
    aliases: ClassVar[tuple[str, ...]] = ()
    #: One line for ``benchtui parse --list``.
    description: ClassVar[str] = ""
    #: True when every line of the tool's own output may start with a wall-clock stamp that
    #: the parser reads itself (SPDK's log prefix, rados bench --show-time): such stamps are
    #: not a logger's, and are left on the lines (``registry.choose_stream``).
    stamps_own_lines: ClassVar[bool] = False

    def __init__(self, host: str = "-", source: str = "-") -> None:
        self.host = host
        self.source = source
        self.lineno = 0
        self.unknown_lines = 0
        self.warnings: list[ParseWarning] = []
        self._dropped_nonfinite = 0
        #: Per-interval latency histogram samples are made only while this is True (a
        #: caller that never reads them, ``benchtui parse`` without --histograms, saves
        #: their cost: on a one-hour fio json+ capture, a third of the parse time).
        self.histograms = True
        #: The resolution the caller keeps histograms at (``model.fio_buckets``' bits; the
        #: session's ``histogram_bits``): a parser may make its histograms that coarse itself
        #: rather than at the tool's own resolution. None: the tool's own.
        self.histogram_bits: int | None = None
        #: True when the caller knows the input is a live per-interval stream (the engine
        #: starts fio with --status-interval=1): a parser may then emit a first interval at
        #: once instead of waiting to tell it from a lone end-of-run report.
        self.stream = False

    # --- what subclasses implement -------------------------------------------------------

    def ready(self) -> None:
        """Called once when a run starts, before its first output (``session.ingest``): work
        a parser would otherwise do on its first document, on the live data path (loading a
        module: numpy's import is ~0.1-0.25 s that a controller's loop would stall on while
        32 hosts' documents wait). Nothing by default."""

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        """Consume one line (no line terminator). Return the samples it completes, if any.
        Call ``self.unknown()`` for a line this parser does not know."""
        raise NotImplementedError

    def flush(self) -> list[Sample] | None:
        """End of stream: return what is still pending (e.g. a partial last interval)."""
        return None

    @classmethod
    def detect(cls, head: str) -> int:
        """0..100: how sure we are that ``head`` (the start of a stream) is this tool's."""
        return 0

    # --- helpers for subclasses ----------------------------------------------------------

    def unknown(self) -> None:
        self.unknown_lines += 1

    def warn(self, reason: str, text: str = "") -> None:
        self.warnings.append(ParseWarning(self.source, self.lineno, reason, text[:_WARN_TEXT_MAX]))

    def sample(
        self,
        metric: str,
        value: float,
        labels: dict[str, str],
        t: float | None,
        *,
        kind: str = INTERVAL,
        elapsed: float | None = None,
        duration: float | None = None,
    ) -> Sample:
        """A sample of this parser's tool and host (``duration``: the seconds of work a partial
        interval covers, see ``Sample.duration``)."""
        return Sample(t, self.tool, kind, metric, value, labels, self.host, elapsed,
                      duration=duration)

    # --- the public interface --------------------------------------------------------------

    def feed(self, line: str, t: float | None = None) -> list[Sample]:
        """One physical line (a trailing newline is stripped). Text rewritten in place with
        ``\\r`` (fio's --eta status line) is split and each part parsed in turn."""
        self.lineno += 1
        line = line.rstrip("\n")
        if "\r" not in line:
            return self._checked(self._safe_parse(line, t))
        out: list[Sample] = []
        for part in line.split("\r"):
            if part:
                out.extend(self._checked(self._safe_parse(part, t)))
        return out

    def feed_text(self, text: str, t: float | None = None) -> list[Sample]:
        """A block of text holding whole lines (as read from a file or a pipe)."""
        # ``feed`` inlined: this is the bulk path (a saved capture of an hour is 50k-100k lines).
        out: list[Sample] = []
        extend = out.extend
        parse = self._safe_parse
        checked = self._checked
        for line in text.split("\n"):
            self.lineno += 1
            if "\r" in line:
                for part in line.split("\r"):
                    if part:
                        extend(checked(parse(part, t)))
                continue
            produced = parse(line, t)
            if produced:
                extend(checked(produced))
        return out

    #: True when feed_bytes takes the raw output in chunks cut anywhere (a live channel's
    #: reads), faster than feed_text its decoded text (docs/architecture.md).
    takes_bytes: bool = False

    def feed_bytes(self, data: bytes, t: float | None = None) -> list[Sample]:
        """Raw UTF-8 output of whole lines, as read from a file (undecodable bytes become
        U+FFFD); any chunk when ``takes_bytes``."""
        return self.feed_text(data.decode("utf-8", errors="replace").removeprefix("\ufeff"), t)

    def feed_lines(self, lines: Iterable[str], t: float | None = None) -> list[Sample]:
        out: list[Sample] = []
        for line in lines:
            out.extend(self.feed(line, t))
        return out

    def finish(self) -> list[Sample]:
        try:
            produced = self.flush()
        except Exception as exc:  # noqa: BLE001 - a parser bug must not kill a live session
            self.warn(f"internal parser error at end of stream ({type(exc).__name__}: {exc})")
            produced = None
        return self._checked(produced)

    @property
    def dropped_nonfinite(self) -> int:
        return self._dropped_nonfinite

    def _safe_parse(self, line: str, t: float | None) -> list[Sample] | None:
        try:
            return self.parse_line(line, t)
        except Exception as exc:  # noqa: BLE001 - a parser bug must not kill a live session
            self.warn(f"internal parser error ({type(exc).__name__}: {exc})", line)
            return None

    def _checked(self, samples: list[Sample] | None) -> list[Sample]:
        if not samples:
            return []
        if all(map(math.isfinite, map(_VALUE, samples))):
            return samples
        kept = [s for s in samples if math.isfinite(s.value)]
        self._dropped_nonfinite += len(samples) - len(kept)
        self.warn(f"dropped {len(samples) - len(kept)} value(s) that were not finite numbers")
        return kept
