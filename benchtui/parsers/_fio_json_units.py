"""What one direction of a fio JSON report says, in base units, whatever fio wrote it (2.0-3.40).

fio changed its JSON over the years; the same figures come out of every version here:

* Latency blocks: fio 3.x writes ``clat_ns``, ``slat_ns``, ``lat_ns`` in nanoseconds; fio 2.x
  writes ``clat``, ``slat``, ``lat`` in microseconds (percentiles too). Only fio 3.17 and later
  give each block a count ``N``; before, a block is measured when its ``max`` is above zero (fio
  prints zeros for a latency it did not measure, e.g. ``slat`` of a synchronous engine), and the
  count of completions is the direction's ``total_ios``.
* ``io_bytes``: bytes since fio 3.0 (which added ``io_kbytes``); KiB before (fio 2.x shifts the
  byte count right by 10 under the same name).
* Bandwidth: ``bw_bytes`` (bytes/s) since fio 3.2; before, only ``bw`` in KiB/s.
* fio 2.x pads a percentile list with ``"0.00" : 0`` entries: no percentile at all.
* fio 2.x json+ ``bins`` are keyed by bucket index with ``FIO_IO_U_PLAT_BITS``/``_VAL`` (values in
  microseconds); fio 3.x keys them by the bucket's value in nanoseconds. Both come out keyed by ns.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # (typing's, without importing typing at run time: 13 M instructions)
if TYPE_CHECKING:
    from typing import Any

#: (measure label, fio 3.x key (ns), fio 2.x key (us)).
MEASURES = (("clat", "clat_ns", "clat"), ("slat", "slat_ns", "slat"), ("lat", "lat_ns", "lat"))
_US = 1000.0
_KIB = 1024


def number(x: object) -> float | None:
    """A finite JSON number as float, else None."""
    if type(x) is int or type(x) is float:
        value = float(x)
        return value if math.isfinite(value) else None
    return None


def is_old(d: dict[str, Any]) -> bool:
    """True for a direction written by fio 2.x (latencies in us, io_bytes in KiB)."""
    return "io_kbytes" not in d and not any(key in d for _, key, _ in MEASURES)


def latency_blocks(d: dict[str, Any]) -> list[tuple[str, dict[str, Any], float]]:
    """(measure, block, ns per unit of the block) for every latency block fio measured."""
    out: list[tuple[str, dict[str, Any], float]] = []
    for measure, key_ns, key_us in MEASURES:
        x = d.get(key_ns)
        scale = 1.0
        if type(x) is not dict:
            x, scale = d.get(key_us), _US
            if type(x) is not dict:
                continue
        n = number(x.get("N"))
        if n is not None:
            if n > 0:
                out.append((measure, x, scale))
        elif (number(x.get("max")) or 0.0) > 0:
            out.append((measure, x, scale))
    return out


def count(d: dict[str, Any], block: dict[str, Any]) -> float:
    """Completions a latency block counts: its ``N``, or the direction's ``total_ios``."""
    n = number(block.get("N"))
    if n is None:
        n = number(d.get("total_ios"))
    return n or 0.0


def io_bytes(d: dict[str, Any]) -> float | None:
    """Bytes transferred (fio 2.x prints KiB under ``io_bytes``)."""
    io = number(d.get("io_bytes"))
    if io is None:
        kib = number(d.get("io_kbytes"))
        return None if kib is None else kib * _KIB
    return io * _KIB if is_old(d) else io


def bandwidth_bytes(d: dict[str, Any]) -> float | None:
    """fio's whole-run bandwidth in bytes/s: ``bw_bytes``, else ``bw`` (KiB/s)."""
    bw = number(d.get("bw_bytes"))
    if bw is not None:
        return bw
    kib = number(d.get("bw"))
    return None if kib is None else kib * _KIB


def percentile_key(key: str, value: float) -> bool:
    """False for fio 2.x's ``"0.00" : 0`` padding."""
    try:
        return float(key) != 0 or value != 0
    except ValueError:
        return False


def bins_ns(raw: dict[str, Any], scale: float) -> dict[str, int] | None:
    """A ``bins`` object keyed by bucket value in ns (as text, ascending), or None if unreadable.
    fio 3.x's is returned as it is (the fast path); fio 2.x's is converted."""
    if scale == 1.0 and "FIO_IO_U_PLAT_BITS" not in raw:
        return raw
    bits, val = raw.get("FIO_IO_U_PLAT_BITS"), raw.get("FIO_IO_U_PLAT_VAL")
    if type(bits) is not int or type(val) is not int or not 0 < bits < 16 or val != 1 << bits:
        return None
    out: dict[int, int] = {}
    for key, c in raw.items():
        if not key.isdigit() or type(c) is not int:
            continue  # FIO_IO_U_PLAT_BITS, _VAL, _NR
        ns = int(_plat_idx_to_val(int(key), bits, val) * scale)
        out[ns] = out.get(ns, 0) + c
    return {str(k): out[k] for k in sorted(out)}


def _plat_idx_to_val(idx: int, bits: int, val: int) -> float:
    """fio's ``plat_idx_to_val`` (stat.c): the middle of bucket ``idx``."""
    if idx < (val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx % val
    return base + (k + 0.5) * (1 << error_bits)
