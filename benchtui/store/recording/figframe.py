"""The payload of a FIGS frame: the figure track, a segment's worth (docs/session-format.md,
"Figure track").

A recorder given a figure track (``benchtui.session.figure_track``) writes, besides the
samples, the figures the console computes from them: each host's at each of its batches
(IOPS and bandwidth summed over its jobs, latency p99 of its merged histograms...) and the
fleet's once a second. A baseline's ghost then reads them instead of decoding the samples and
computing them again (``session.baseline``). Figures are named by keys (tuples of strings,
the digest's), hosts by name, the fleet by ``FLEET_HOST``.

A payload (zstd at the writer) holds a table of hosts and a table of keys (JSON), then its
ticks by columns: each tick's time (f64, byte planes), host and number of figures (planed
varints), then every figure's key (planed varints) and value: an f32 rounded to its top three
bytes (16 bits of mantissa: within 2**-16 of the figure), in three byte planes. A ghost is
drawn on a chart a few rows high and compared within a tolerance of percents; the lowest
byte of an f32 is noise that does not compress (a third of the track: measured on the
reference session, docs/benchmarks/recording.md).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Final

import orjson

from benchtui.store.recording.varint import (
    CodecError,
    get_blob,
    get_list,
    put_blob,
    put_list,
    shuffle,
    unshuffle,
)

#: The host name that stands for the fleet in a figure track.
FLEET_HOST: Final = ""
#: A figure's name, e.g. ``("iops", "read")``.
Key = tuple[str, ...]
#: One tick: (time, host or FLEET_HOST, its figures).
Tick = tuple[float, str, Sequence[tuple[Key, float]]]


def encode(ticks: Sequence[Tick]) -> bytes:
    """The (uncompressed) payload for ``ticks``."""
    hosts: dict[str, int] = {}
    keys: dict[Key, int] = {}
    times = array("d")
    host_ids: list[int] = []
    counts: list[int] = []
    key_ids: list[int] = []
    values = array("f")
    for t, host, figures in ticks:
        times.append(t)
        hid = hosts.get(host)
        if hid is None:
            hid = hosts[host] = len(hosts)
        host_ids.append(hid)
        counts.append(len(figures))
        for key, value in figures:
            kid = keys.get(key)
            if kid is None:
                kid = keys[key] = len(keys)
            key_ids.append(kid)
            values.append(value)  # (beyond f32's range: an infinity)
    out = bytearray()
    put_blob(out, orjson.dumps({"hosts": list(hosts), "keys": [list(k) for k in keys]}))
    put_blob(out, shuffle(times.tobytes(), 8))
    put_list(out, host_ids)
    put_list(out, counts)
    put_list(out, key_ids)
    put_blob(out, _top_bytes(values))
    return bytes(out)


def _top_bytes(values: array[float]) -> bytes:
    """f32 values rounded to their top three bytes, as three byte planes (low to high)."""
    bits = array("I")
    bits.frombytes(values.tobytes())
    # round to nearest: a carry runs into the exponent as it should (the largest finite
    # values round to infinity; infinities and NaNs stay what they are)
    rounded = array("I", [(b + 0x80) >> 8 if b & 0x7F800000 != 0x7F800000 else b >> 8
                          for b in bits])
    return shuffle(rounded.tobytes(), 4)[:3 * len(values)]


def _from_top_bytes(planes: bytes) -> array[float]:
    if len(planes) % 3:
        raise ValueError("figure values are not whole")
    n = len(planes) // 3
    bits = array("I")
    bits.frombytes(unshuffle(planes + bytes(n), 4))
    values = array("f")
    values.frombytes(array("I", [b << 8 & 0xFFFFFFFF for b in bits]).tobytes())
    return values


def decode(payload: bytes) -> list[Tick]:
    """The ticks of a payload; raises CodecError when it is damaged."""
    try:
        head, pos = get_blob(payload, 0)
        tables = orjson.loads(head)
        hosts = [str(h) for h in tables["hosts"]]
        keys = [tuple(str(p) for p in k) for k in tables["keys"]]
        raw_times, pos = get_blob(payload, pos)
        host_ids, pos = get_list(payload, pos)
        counts, pos = get_list(payload, pos)
        key_ids, pos = get_list(payload, pos)
        raw_values, pos = get_blob(payload, pos)
        times = array("d")
        times.frombytes(unshuffle(raw_times, 8))
        values = _from_top_bytes(raw_values)
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise CodecError(f"damaged figure track: {error}") from None
    if not (len(times) == len(host_ids) == len(counts) and sum(counts) == len(key_ids)
            == len(values)) or pos != len(payload):
        raise CodecError("damaged figure track: its columns do not agree")
    if (host_ids and max(host_ids) >= len(hosts)) or (key_ids and max(key_ids) >= len(keys)):
        raise CodecError("damaged figure track: a host or key out of its table")
    out: list[Tick] = []
    at = 0
    for t, hid, n in zip(times, host_ids, counts, strict=True):
        out.append((t, hosts[hid], [(keys[k], v) for k, v in
                                    zip(key_ids[at:at + n], values[at:at + n], strict=True)]))
        at += n
    return out


def within(ticks: Iterable[Tick], t0: float, t1: float) -> Iterator[Tick]:
    """The ticks whose time is in [t0, t1)."""
    return (tick for tick in ticks if t0 <= tick[0] < t1)
