"""``rbd bench`` / ``rbd bench-write`` text output.

What is parsed (see Ceph's ``src/tools/rbd/action/Bench.cc``):

- the run line ``bench  type write io_size 4096 io_threads 16 bytes 1073741824 pattern
  sequential`` (``type read``, ``type readwrite read:write=70:30``; ``bench-write  io_size ...``
  in the oldest versions): the operation and the I/O size;
- the table ``  SEC       OPS   OPS/SEC   BYTES/SEC``, in two row forms:
  before Octopus ``%5d  %8d  %8.2lf  %8.2lf`` (``    1       6625      4349.81    17816805.42``,
  BYTES/SEC a plain number), since Octopus ``std::cout`` with ``byte_u_t``: ``    1     28896
  29027.5   113 MiB/s`` (units `` B``, `` KiB``, `` MiB``, `` GiB``, `` TiB``, `` PiB``, binary,
  then ``/s``; the value is shown with at most 2 decimals, as an integer from 10 up);
- the summary ``elapsed: 10   ops: 262144   ops/sec: 23917.8   bytes/sec: 93 MiB/s`` (or
  ``bytes/sec: 10097188.73``), and for ``--io-type readwrite`` the two lines ``read_ops: N
  read_ops/sec: X   read_bytes/sec: Y`` and ``write_ops: ...``. The per-second rows of a
  readwrite run are not split by operation in any Ceph version: they are labelled ``op=total``;
- the command line (``rbd bench --io-type write pool/image``, ``rbd bench-write image
  --pool=rbd``) when it is in the text: it names the image (the ``job`` label, ``pool/image``).

Per row (kind ``interval``, ``elapsed`` = the SEC column, ``t`` = the time the line was received):
``iops{job,op}`` = OPS/SEC and ``bandwidth_bytes{job,op}`` = BYTES/SEC. Both are rbd bench's own
figures: the mean over the last (up to) 5 reports (``WINDOW_SIZE = 5`` rolling sums in Bench.cc;
the oldest versions printed the mean since the start). When BYTES/SEC is printed with a unit
(rounded to the unit) and the I/O size is known, bandwidth is OPS/SEC x io_size, which is exactly
what rbd bench divides (it adds io_size bytes per I/O) and keeps 6 significant digits.

Summary (kind ``summary``): ``iops`` and ``bandwidth_bytes`` for the whole run, ``elapsed`` =
ops / (ops/sec) (the exact run time; the printed ``elapsed`` is truncated to whole seconds).
A stream holding several runs (a pasted report) labels the second and later ones ``run="2"``...
"""

from __future__ import annotations

import re
from typing import ClassVar, Final

from benchtui.model.sample import SUMMARY, Sample
from benchtui.model.units import BYTE_UNITS, parse_float
from benchtui.parsers.base import Parser

_HEADER = re.compile(r"^\s*SEC\s+OPS\s+OPS/SEC\s+BYTES/SEC\s*$")
_RUN = re.compile(
    r"^bench(-write)?\s+(?:type\s+(\w+)\s+)?(?:read:write=\d+:\d+\s+)?io_size\s+(\d{1,12})\b"
)
_NUM = r"([0-9][0-9.]*(?:[eE][-+]?\d+)?)"
_BYTES = _NUM + r"(?:\s*([KMGTPE]iB|B)/s)?"
_ROW = re.compile(r"^\s*(\d{1,12}(?:\.\d+)?)\s+(\d{1,18})\s+" + _NUM + r"\s+" + _BYTES + r"\s*$")
_TOTAL = re.compile(r"^elapsed:\s*(\d{1,12})\s+ops:\s*(\d{1,18})\s+ops/sec:\s*" + _NUM
                    + r"\s+bytes/sec:\s*" + _BYTES)
_SPLIT = re.compile(r"^(read|write)_ops:\s*(\d{1,18})\s+\w+_ops/sec:\s*" + _NUM
                    + r"\s+\w+_bytes/sec:\s*" + _BYTES)
_TYPES: Final = {"write": "write", "read": "read", "readwrite": "total", "rw": "total"}
#: rbd options that take a value (the image spec is the first other word after the action).
_VALUE_OPTS: Final = frozenset((
    "--io-size", "--io-threads", "--io-total", "--io-pattern", "--io-type", "--rw-mix-read",
    "--pattern-byte", "-p", "--pool", "--namespace", "--image", "-c", "--conf", "--cluster",
    "--id", "-n", "--name", "-k", "--keyring", "-m", "--mon-host",
))


def parse_iec_size(text: str) -> int | None:
    """rbd's ``--io-size`` argument: ``4096``, ``4K``, ``4M``, ``1G`` (K/M/G/T binary)."""
    m = re.fullmatch(r"(\d{1,12})\s*([KMGTPE]?)(?:i?B)?", text.strip(), re.IGNORECASE)
    if m is None:
        return None
    shift = " KMGTPE".index(m.group(2).upper() or " ") * 10
    return int(m.group(1)) << shift


def parse_command(line: str) -> dict[str, str] | None:
    """Options of an ``rbd bench`` / ``rbd bench-write`` command line (``image`` for the image
    spec), None if the line is not one."""
    tokens = line.split()
    try:
        i_rbd = next(i for i, tok in enumerate(tokens) if tok == "rbd" or tok.endswith("/rbd"))
        i_act = next(i for i in range(i_rbd + 1, len(tokens))
                     if tokens[i] in ("bench", "bench-write"))
    except StopIteration:
        return None
    found: dict[str, str] = {"action": tokens[i_act]}
    i = i_rbd + 1
    while i < len(tokens):
        tok = tokens[i]
        if i == i_act:
            pass
        elif tok.startswith("-"):
            name, eq, value = tok.partition("=")
            if not eq and name in _VALUE_OPTS and i + 1 < len(tokens):
                value = tokens[i + 1]
                i += 1
            found[name.lstrip("-")] = value
        elif i > i_act and "image-spec" not in found:
            found["image-spec"] = tok
        i += 1
    return found


class RbdBenchParser(Parser):
    name: ClassVar[str] = "rbd-bench"
    tool: ClassVar[str] = "rbd_bench"
    aliases: ClassVar[tuple[str, ...]] = ("rbd",)
    description: ClassVar[str] = "Ceph rbd bench / bench-write per-second rows and summary"

    def __init__(self, host: str = "-", source: str = "-", *, io_type: str | None = None,
                 image: str | None = None) -> None:
        super().__init__(host, source)
        self._kw_op = _TYPES.get(io_type) if io_type else None
        self._kw_job = image
        #: Runs in this stream (a report may paste several): the 2nd on get a ``run`` label.
        self._run_no = 0
        self._has_data = True
        self._new_run({})

    def _new_run(self, cmd: dict[str, str]) -> None:
        if self._has_data:
            self._run_no += 1
        job = self._kw_job or "rbd"
        spec = cmd.get("image-spec") or cmd.get("image")
        if not self._kw_job and spec:
            pool = cmd.get("pool") or cmd.get("p")
            job = spec if "/" in spec or not pool else f"{pool}/{spec}"
        self._job = job
        op = self._kw_op or _TYPES.get(cmd.get("io-type", ""))
        if op is None and cmd.get("action") == "bench-write":
            op = "write"
        self._op: str | None = op
        size = cmd.get("io-size")
        self._io_size: int | None = parse_iec_size(size) if size else None
        self._in_table = False
        self._has_data = False
        self._elapsed: float | None = None

    def _labels(self, op: str) -> dict[str, str]:
        if self._run_no > 1:
            return {"job": self._job, "op": op, "run": str(self._run_no)}
        return {"job": self._job, "op": op}

    @classmethod
    def detect(cls, head: str) -> int:
        if re.search(r"^\s*SEC\s+OPS\s+OPS/SEC\s+BYTES/SEC\s*$", head, re.MULTILINE):
            return 90
        if re.search(r"^elapsed:\s*\d+\s+ops:\s*\d+\s+ops/sec:", head, re.MULTILINE):
            return 80
        if re.search(r"^bench(?:-write)?\s+(?:type\s+\w+\s+)?.*io_size\s+\d+\s+io_threads",
                     head, re.MULTILINE):
            return 60
        return 0

    def parse_line(self, line: str, t: float | None) -> list[Sample] | None:
        s = line.strip()
        if not s:
            return None
        c = s[0]
        if c.isdigit():
            return self._row(s, t)
        if c == "S" and _HEADER.match(s):
            if self._has_data:
                self._new_run({})
            self._in_table = True
            return None
        if c == "e" and s.startswith("elapsed:"):
            return self._total(s, t)
        if (c in "rw") and "_ops:" in s:
            return self._split(s, t)
        if c == "b" and s.startswith("bench"):
            m = _RUN.match(s)
            if m is not None:
                if self._has_data:
                    self._new_run({})
                kind = m.group(2)
                if self._kw_op is None:
                    self._op = "write" if m.group(1) else _TYPES.get(kind or "", self._op)
                self._io_size = int(m.group(3))
                return None
        if "rbd" in s and "bench" in s:
            if s.startswith("rbd: bench-write is deprecated"):
                return None
            cmd = parse_command(s)
            if cmd is not None:
                self._new_run(cmd)
                return None
        self.unknown()
        return None

    def _bandwidth(self, number: str, unit: str | None, ops_rate: float | None) -> float | None:
        value = parse_float(number)
        if value is None:
            return None
        if unit is None:
            return value
        if self._io_size is not None and ops_rate is not None:
            return ops_rate * self._io_size
        mult = BYTE_UNITS.get(unit)
        if mult is None:
            mult = 1024.0 ** 6 if unit == "EiB" else None
        return None if mult is None else value * mult

    def _row(self, s: str, t: float | None) -> list[Sample] | None:
        m = _ROW.match(s)
        if m is None or not self._in_table:
            self.unknown()
            return None
        self._has_data = True
        sec = float(m.group(1))
        ops_rate = parse_float(m.group(3))
        bandwidth = self._bandwidth(m.group(4), m.group(5), ops_rate)
        if ops_rate is None or bandwidth is None:
            self.warn("rbd bench row with a value that is not a number", s)
            return None
        labels = self._labels(self._op or "total")
        return [self.sample("iops", ops_rate, labels, t, elapsed=sec),
                self.sample("bandwidth_bytes", bandwidth, labels, t, elapsed=sec)]

    def _total(self, s: str, t: float | None) -> list[Sample] | None:
        m = _TOTAL.match(s)
        if m is None:
            self.unknown()
            return None
        self._in_table = False
        self._has_data = True
        ops = int(m.group(2))
        ops_rate = parse_float(m.group(3))
        bandwidth = self._bandwidth(m.group(4), m.group(5), ops_rate)
        if ops_rate is None or bandwidth is None:
            self.warn("rbd bench summary with a value that is not a number", s)
            return None
        whole = float(m.group(1))  # the run time truncated to whole seconds
        exact = ops / ops_rate if ops_rate > 0 else whole
        self._elapsed = min(max(exact, whole), whole + 1.0)
        labels = self._labels(self._op or "total")
        return [self.sample("iops", ops_rate, labels, t, kind=SUMMARY, elapsed=self._elapsed),
                self.sample("bandwidth_bytes", bandwidth, labels, t, kind=SUMMARY,
                            elapsed=self._elapsed)]

    def _split(self, s: str, t: float | None) -> list[Sample] | None:
        m = _SPLIT.match(s)
        if m is None:
            self.unknown()
            return None
        ops_rate = parse_float(m.group(3))
        bandwidth = self._bandwidth(m.group(4), m.group(5), ops_rate)
        if ops_rate is None or bandwidth is None or self._elapsed is None:
            self.warn("rbd bench read/write summary without its total line or not a number", s)
            return None
        labels = self._labels(m.group(1))
        return [self.sample("iops", ops_rate, labels, t, kind=SUMMARY, elapsed=self._elapsed),
                self.sample("bandwidth_bytes", bandwidth, labels, t, kind=SUMMARY,
                            elapsed=self._elapsed)]
