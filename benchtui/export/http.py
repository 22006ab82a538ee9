"""The ``/metrics`` endpoint's rules: the address given, what each request is answered with.

It speaks what the scraper asks for: OpenMetrics 1.0 when the ``Accept`` header names it
(Prometheus does), else the Prometheus text format 0.0.4; gzip when accepted. ``/`` answers
with a line pointing to ``/metrics``; other paths are 404. The server itself (sockets, threads,
timeouts) is ``http_server.MetricsServer``.

Binding is where users make mistakes, so it says what went wrong in one sentence: a port in use,
an address that is not on this machine, a port below 1024 without the right to bind it.
"""

from __future__ import annotations

import errno
import gzip
import ipaddress
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from benchtui.errors import ExportError, UsageError

DEFAULT_LISTEN = "127.0.0.1:9464"
TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
_HINT_PORT = "choose another port (e.g. --listen 127.0.0.1:9465, or --export)"


def parse_listen(text: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port``; ``:port`` or a bare port mean 127.0.0.1) -> (host, port)."""
    value = text.strip()
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "", value
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise UsageError(f"metrics address {text!r}: write an IPv6 address in brackets, "
                         "e.g. [::1]:9464")
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise UsageError(f"metrics address {text!r} is not host:port; write e.g. "
                         f"{DEFAULT_LISTEN}")
    return host or "127.0.0.1", int(port_text)


def is_loopback(host: str) -> bool:
    """True when ``host`` (an address this server is bound to) is only reachable from here."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return host == "localhost"


def exposure_warning(address: str, host: str) -> str | None:
    """The warning to print when the endpoint is reachable from other machines."""
    if is_loopback(host):
        return None
    return (f"metrics are served on {address} to other machines too: the data is "
            "unauthenticated, anyone who can reach this port can read it")


class Exposition(Protocol):
    """What the server serves (``FleetCollector``)."""

    def render(self, *, openmetrics: bool = False) -> bytes: ...


def wants_openmetrics(accept: str) -> bool:
    """True when the ``Accept`` header asks for OpenMetrics 1.x (version absent or 1.x)."""
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        if media != "application/openmetrics-text":
            continue
        version = next((p.split("=", 1)[1] for p in params if p.startswith("version=")), "1")
        if version.split(".")[0] == "1":
            return True
    return False


def _accepts_gzip(accept_encoding: str) -> bool:
    return any(item.split(";")[0].strip().lower() == "gzip"
               for item in accept_encoding.split(","))


@dataclass(frozen=True)
class Response:
    status: str
    headers: list[tuple[str, str]]
    body: bytes


_TEXT = [("Content-Type", "text/plain; charset=utf-8")]


#: ``body(openmetrics, gzipped)``: the scrape's body in that format.
Body = Callable[[bool, bool], bytes]


def render_body(source: Exposition, openmetrics: bool, gzipped: bool) -> bytes:
    """What ``/metrics`` sends: the source rendered now, gzip-compressed when asked."""
    body = source.render(openmetrics=openmetrics)
    return gzip.compress(body, compresslevel=1) if gzipped else body


def respond(body: Body, method: str, path: str, headers: Mapping[str, str]) -> Response:
    """The answer to one request (``headers`` with lower-case names)."""
    path = path.split("?", 1)[0]
    if path == "/metrics":
        if method not in ("GET", "HEAD"):
            return Response("405 Method Not Allowed", [("Allow", "GET, HEAD"), *_TEXT],
                            b"use GET\n")
        openmetrics = wants_openmetrics(headers.get("accept", ""))
        gzipped = _accepts_gzip(headers.get("accept-encoding", ""))
        out = [("Content-Type", OPENMETRICS_TYPE if openmetrics else TEXT_TYPE)]
        if gzipped:
            out.append(("Content-Encoding", "gzip"))
        return Response("200 OK", out, body(openmetrics, gzipped))
    if path == "/":
        return Response("200 OK", _TEXT, b"benchtui exporter: the metrics are at /metrics\n")
    return Response("404 Not Found", _TEXT, b"not found: the metrics are at /metrics\n")


def bind_error(address: str, exc: OSError) -> ExportError:
    if exc.errno == errno.EADDRINUSE:
        return ExportError(address, "the port is already in use by another program",
                           f"stop that program or {_HINT_PORT}")
    if exc.errno == errno.EACCES:
        return ExportError(address, "not allowed to listen on this port (ports below 1024 "
                           "need root)", _HINT_PORT)
    if exc.errno == errno.EADDRNOTAVAIL:
        return ExportError(address, "this address is not one of this machine's",
                           f"give one of its addresses, e.g. {DEFAULT_LISTEN}")
    return ExportError(address, exc.strerror or str(exc))
