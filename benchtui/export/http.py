"""The ``/metrics`` endpoint: a small threaded HTTP server in the background.

It runs on its own daemon threads, so a scrape never waits for the event loop that runs the
session, and the session never waits for a scrape. It speaks what the scraper asks for:
OpenMetrics 1.0 when the ``Accept`` header names it (Prometheus does), else the Prometheus text
format 0.0.4; gzip when accepted. ``/`` answers with a line pointing to ``/metrics``; other
paths are 404.

Binding is where users make mistakes, so it says what went wrong in one sentence: a port in use,
an address that is not on this machine, a port below 1024 without the right to bind it.
"""

from __future__ import annotations

import errno
import gzip
import ipaddress
import socket
import threading
from collections.abc import Callable, Iterable
from socketserver import ThreadingMixIn
from typing import Any, Protocol
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from benchtui.errors import ExportError, UsageError

DEFAULT_LISTEN = "127.0.0.1:9464"
TEXT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
OPENMETRICS_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
_HINT_PORT = "choose another port (e.g. --listen 127.0.0.1:9465, or --export)"

StartResponse = Callable[..., Any]


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


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    allow_reuse_address = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log on the user's terminal."""


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


def _app(source: Exposition) -> Callable[[dict[str, Any], StartResponse], Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            if environ.get("REQUEST_METHOD", "GET") not in ("GET", "HEAD"):
                start_response("405 Method Not Allowed", [("Allow", "GET, HEAD")])
                return [b"use GET\n"]
            openmetrics = wants_openmetrics(environ.get("HTTP_ACCEPT", ""))
            body = source.render(openmetrics=openmetrics)
            headers = [("Content-Type", OPENMETRICS_TYPE if openmetrics else TEXT_TYPE)]
            if _accepts_gzip(environ.get("HTTP_ACCEPT_ENCODING", "")):
                body = gzip.compress(body, compresslevel=1)
                headers.append(("Content-Encoding", "gzip"))
            start_response("200 OK", headers)
            return [body]
        if path == "/":
            start_response("200 OK", [("Content-Type", "text/plain; charset=utf-8")])
            return [b"benchtui exporter: the metrics are at /metrics\n"]
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found: the metrics are at /metrics\n"]

    return app


class MetricsServer:
    """Serves ``source`` on ``http://host:port/metrics`` until ``close()``."""

    def __init__(self, source: Exposition, host: str, port: int) -> None:
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
        except socket.gaierror:
            raise ExportError(shown, f"{host!r} is not an address or a known host name",
                              "give an address of this machine, e.g. --listen "
                              f"{DEFAULT_LISTEN}") from None
        family, _, _, _, sockaddr = infos[0]
        server_class = type("_BoundServer", (_Server,), {"address_family": family})
        try:
            self._httpd: WSGIServer = make_server(
                str(sockaddr[0]), port, _app(source), server_class,
                handler_class=_QuietHandler)
        except OSError as exc:
            raise _bind_error(shown, exc) from None
        bound: tuple[Any, ...] = tuple(self._httpd.socket.getsockname())
        self.host = str(bound[0])
        self.port = int(bound[1])
        self.address = f"[{self.host}]:{self.port}" if ":" in self.host \
            else f"{self.host}:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        name=f"benchtui-metrics-{self.port}", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.address}/metrics"

    def close(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _bind_error(address: str, exc: OSError) -> ExportError:
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
