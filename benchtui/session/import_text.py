"""A file of saved output read by ``benchtui import`` as lines, a block at a time: never
held whole (docs/import.md, "Limits, and why").

``TextFile.blocks`` reads the file from its start in blocks of ``BLOCK_BYTES`` and gives
its lines as ``benchtui parse`` reads them: decoded (UTF-16 with a BOM, else UTF-8, bytes
that do not decode becoming U+FFFD: ``parsers.base.decode_output``), a report whose line
breaks were lost put back on fio's lines (``parsers._flattened``: a long line at a time),
split at ``\\n`` only. Its size and SHA-256 are taken on the way. A file is read twice when
a map cuts it (once to find its pieces, once to parse them): the second reading must find
the same bytes, else the file changed while it was imported.

Lines that hold control characters other than tab and line ends are noted (a name a tool
printed may only hold them if the text does: ``importer`` refuses such names with their
line).
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from typing import Final

from benchtui.errors import InputError
from benchtui.parsers._flattened import MIN_CHARS, restore_line
from benchtui.session.inputs import MAX_INPUT_BYTES, check_input, grew, input_error

#: Bytes read at a time.
BLOCK_BYTES: Final = 1 << 20
#: Lines with stray control characters remembered (to name the line of a name holding one).
_CONTROL_LINES: Final = 10_000
#: Control characters other than tab and line ends: a name can only hold them if the text does.
STRAY_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class TextFile:
    """A regular file of saved output (``inputs.check_input``: at most 512 MiB), read as
    lines (the module's doc)."""

    def __init__(self, path: str, *, hint: str) -> None:
        self.path = path
        self.hint = hint
        self.size = check_input(path, hint=hint)
        #: When the file was last written (the year of syslog stamps, which print none).
        self.mtime: float | None = None
        with contextlib.suppress(OSError):
            self.mtime = os.stat(path).st_mtime
        #: After a whole reading: the SHA-256 of the file's bytes, and how many there were.
        self.sha256 = ""
        self.read_bytes = 0
        #: (line number, line) of the lines holding stray control characters (the first ones).
        self.control_lines: list[tuple[int, str]] = []

    @property
    def described(self) -> dict[str, object]:
        """What META's ``imported_from`` says of the file."""
        return {"path": self.path, "bytes": self.read_bytes, "sha256": self.sha256}

    def blocks(self) -> Iterator[tuple[int, list[str], bool]]:
        """(number of the block's first line, its lines, whether one of them holds a stray
        control character), from the file's start to its end."""
        digest = hashlib.sha256()
        total = 0
        number = 1
        rest = ""
        decoder: codecs.IncrementalDecoder | None = None
        bom = False
        try:
            with open(self.path, "rb") as f:
                while True:
                    data = f.read(BLOCK_BYTES if decoder else max(BLOCK_BYTES, 2))
                    end = not data
                    total += len(data)
                    if total > MAX_INPUT_BYTES:
                        raise grew(self.path, hint=self.hint)
                    digest.update(data)
                    if decoder is None:  # (as parsers.base.decode_output decodes)
                        utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
                        decoder = codecs.getincrementaldecoder("utf-16" if utf16 else "utf-8")(
                            errors="replace")
                        bom = not utf16  # (UTF-8's is dropped; UTF-16's codec drops its own)
                    text = decoder.decode(data, final=end)
                    if bom and text:
                        text, bom = text.removeprefix("\ufeff"), False
                    lines = (rest + text).split("\n")
                    rest = "" if end else lines.pop()
                    if lines:
                        lines = _restored(lines)
                        flagged = STRAY_CONTROL.search(text) is not None \
                            and self._note_controls(number, lines)
                        yield number, lines, flagged
                        number += len(lines)
                    if end:
                        break
        except OSError as exc:
            raise input_error(self.path, exc) from None
        self._read_once(digest.hexdigest(), total)

    def _note_controls(self, number: int, lines: list[str]) -> bool:
        found = False
        for i, line in enumerate(lines):
            if STRAY_CONTROL.search(line):
                found = True
                if len(self.control_lines) < _CONTROL_LINES:
                    self.control_lines.append((number + i, line))
        return found

    def _read_once(self, sha256: str, total: int) -> None:
        if self.sha256 and (sha256, total) != (self.sha256, self.read_bytes):
            raise InputError(self.path, "changed while it was imported", "import it again "
                             "once nothing writes to it")
        self.sha256, self.read_bytes = sha256, total


def _restored(lines: list[str]) -> list[str]:
    """``lines`` with each flattened report among them put back on its lines."""
    if max(map(len, lines)) < MIN_CHARS:
        return lines
    out: list[str] = []
    for line in lines:
        if len(line) >= MIN_CHARS:
            out.extend(restore_line(line).split("\n"))
        else:
            out.append(line)
    return out
