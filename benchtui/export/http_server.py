"""The ``/metrics`` HTTP server: bursts of scrapes, idle connections and slow clients, bounded.

One thread owns every connection and does all their I/O, non-blocking, with a selector
(``selectors``): accepting, reading a request until its header is complete, writing answers.
A small pool of worker threads (``workers``) only renders answers (``fresh_render``: scrapes
that arrive together share one rendering). So no client can hold a thread: not one that sends
half a request (slowloris), nor one that asks for answers and never reads them (a slow reader),
and threads are bounded (1 + ``workers``) however many connections are open.

Every connection is bounded in time and memory:

- idle, or sending its request: at most ``idle_timeout`` from its last answer (or its
  connect) to a complete request header, which may hold at most ``MAX_HEADER`` bytes;
- answering: at most ``write_timeout`` from the answer being ready to its last byte taken by
  the client, else the connection is closed;
- one request at a time: pipelined requests wait, unread, until the answer before them is
  written, so a connection holds at most one answer and one read buffer.

Connections are at most ``max_connections`` (and never more than half the process's open-file
limit, which the session needs too). When a new one comes at the limit, the connection that
has waited for a request the longest (idle, or sending one slowly) is closed to make room; a
new connection is refused only when every one is being answered. A client that holds many
connections open and idle thus cannot lock scrapers out. Running out of file descriptors anyway
(another part of the process took them) sheds waiting connections the same way, or pauses
accepting for a moment.

The listening socket has a backlog of ``BACKLOG`` (the kernel caps it at ``somaxconn``), so a
burst of scrapers (several Prometheus servers, a federation, a dashboard reload) is queued,
not left to SYN retransmits. HTTP/1.1 keep-alive is kept (Prometheus reuses its connection);
HTTP/1.0 closes. The session never waits for a scrape, nor a scrape for the session.
"""

from __future__ import annotations

import contextlib
import errno
import resource
import selectors
import socket
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from benchtui.errors import ExportError
from benchtui.export.fresh_render import FreshRenderer
from benchtui.export.http import DEFAULT_LISTEN, Exposition, bind_error, render_body, respond

#: Listen backlog asked for (Linux caps it at net.core.somaxconn, 4096 on recent kernels).
BACKLOG = 512
#: Seconds a connection may stay idle, or take to send a whole request header.
IDLE_TIMEOUT = 30.0
#: Seconds a client has to take a whole answer once it is ready.
WRITE_TIMEOUT = 10.0
#: Threads that render answers.
WORKERS = 4
#: Connections open at once (at most half the open-file limit); at the limit, the longest
#: idle one is closed for a new one.
MAX_CONNECTIONS = 4096
#: Largest request header read (bytes): a scrape's is a few hundred.
MAX_HEADER = 16 * 1024
#: Bytes read at once from a connection.
_READ = 65536
#: How long accepting pauses when the process has no file descriptor left and nothing to shed.
_ACCEPT_PAUSE = 0.1
_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


@dataclass(slots=True, eq=False)
class _Connection:
    sock: socket.socket
    #: When the connection is closed unless it makes progress (monotonic seconds).
    deadline: float
    buffer: bytearray = field(default_factory=bytearray)
    #: An answer being rendered for it.
    rendering: bool = False
    #: The answer being written, from ``sent`` on; close once written unless ``keep``.
    out: bytes = b""
    sent: int = 0
    keep: bool = True


def connection_limit(wanted: int) -> int:
    """``wanted``, but at most half this process's open-file limit (the session's SSH
    connections, recordings and child processes need the rest)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(8, min(wanted, soft // 2))


class MetricsServer:
    """Serves ``source`` on ``http://host:port/metrics`` until ``close()``."""

    def __init__(self, source: Exposition, host: str, port: int, *,
                 idle_timeout: float = IDLE_TIMEOUT, write_timeout: float = WRITE_TIMEOUT,
                 workers: int = WORKERS, max_connections: int = MAX_CONNECTIONS) -> None:
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                       flags=socket.AI_PASSIVE)
        except socket.gaierror:
            raise ExportError(shown, f"{host!r} is not an address or a known host name",
                              "give an address of this machine, e.g. --listen "
                              f"{DEFAULT_LISTEN}") from None
        family, _, _, _, sockaddr = infos[0]
        listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(sockaddr)
            listener.listen(BACKLOG)
        except OSError as exc:
            listener.close()
            raise bind_error(shown, exc) from None
        listener.setblocking(False)
        self._listener = listener
        self._renderer = FreshRenderer(lambda om, gz: render_body(source, om, gz))
        self.idle_timeout = idle_timeout
        self.write_timeout = write_timeout
        self.max_connections = connection_limit(max_connections)
        bound: tuple[Any, ...] = tuple(listener.getsockname())
        self.host = str(bound[0])
        self.port = int(bound[1])
        self.address = f"[{self.host}]:{self.port}" if ":" in self.host \
            else f"{self.host}:{self.port}"
        self._selector = selectors.DefaultSelector()
        self._selector.register(listener, selectors.EVENT_READ, None)
        self._accepting = True
        self._resume_accepting = 0.0
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._connections: dict[socket.socket, _Connection] = {}
        #: The connections waiting for a request (idle, or sending one), longest waiting first:
        #: the first to go at the limit.
        self._waiting: dict[socket.socket, None] = {}
        #: Answers the workers rendered: (connection, bytes, keep-alive).
        self._rendered: deque[tuple[_Connection, bytes, bool]] = deque()
        self._pool = ThreadPoolExecutor(max_workers=workers,
                                        thread_name_prefix=f"benchtui-metrics-{self.port}")
        self._stopping = False
        self._thread = threading.Thread(target=self._loop, name=f"benchtui-metrics-{self.port}",
                                        daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.address}/metrics"

    @property
    def open_connections(self) -> int:
        """Connections open now (idle, reading, being answered)."""
        return len(self._connections)

    def close(self) -> None:
        """Stop serving, close every connection and release the port."""
        self._stopping = True
        self._wake()
        self._thread.join(timeout=5)
        self._pool.shutdown(wait=True, cancel_futures=True)
        for sock in list(self._connections):
            self._drop(sock)
        self._selector.close()
        self._listener.close()
        self._wake_r.close()
        self._wake_w.close()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the I/O thread --------------------------------------------------------------------

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # (a full wake-up pipe already wakes it)
            self._wake_w.send(b"\0")

    def _loop(self) -> None:
        sweep_every = min(1.0, self.idle_timeout / 4, self.write_timeout / 4)
        next_sweep = time.monotonic() + sweep_every
        while not self._stopping:
            timeout = sweep_every if self._accepting else _ACCEPT_PAUSE
            events = self._selector.select(timeout=timeout)
            now = time.monotonic()
            for key, mask in events:
                sock = key.fileobj
                if sock is self._listener:
                    self._accept(now)
                elif sock is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                elif isinstance(sock, socket.socket):
                    if mask & selectors.EVENT_WRITE:
                        self._write(sock, now)
                    elif mask & selectors.EVENT_READ:
                        self._read(sock, now)
            while self._rendered:
                conn, payload, keep = self._rendered.popleft()
                self._answer(conn, payload, keep, now)
            if not self._accepting and now >= self._resume_accepting:
                self._accepting = True
                self._selector.register(self._listener, selectors.EVENT_READ, None)
            if now >= next_sweep:  # not at every wake-up: a burst wakes it hundreds of times
                next_sweep = now + sweep_every
                for sock, conn in list(self._connections.items()):
                    if conn.deadline < now and not conn.rendering:
                        self._drop(sock)

    def _accept(self, now: float) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_FILES and self._shed_idle():
                    continue
                if exc.errno in _OUT_OF_FILES:  # nothing to shed: try again a little later
                    self._accepting = False
                    self._resume_accepting = now + _ACCEPT_PAUSE
                    self._selector.unregister(self._listener)
                return  # (others, e.g. ECONNABORTED: the next select retries)
            if len(self._connections) >= self.max_connections and not self._shed_idle():
                sock.close()  # every connection is being answered: this one must wait
                continue
            sock.setblocking(False)
            conn = _Connection(sock, now + self.idle_timeout)
            self._connections[sock] = conn
            self._waiting[sock] = None
            self._selector.register(sock, selectors.EVENT_READ, None)

    def _shed_idle(self) -> bool:
        """Close the connection that has waited for a request the longest (idle, or sending
        one slowly); False when every connection is being answered."""
        for sock in self._waiting:
            self._drop(sock)
            return True
        return False

    def _read(self, sock: socket.socket, now: float) -> None:
        conn = self._connections.get(sock)
        if conn is None:
            return
        try:
            data = sock.recv(_READ)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(sock)
            return
        if not data:
            self._drop(sock)
            return
        conn.buffer += data
        self._next_request(conn, now)

    def _next_request(self, conn: _Connection, now: float) -> None:
        """Hand the first complete request in ``conn``'s buffer to a worker (and stop reading
        until it is answered), or wait for more of it."""
        end = conn.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(conn.buffer) > MAX_HEADER:
                self._drop(conn.sock)
            return
        request = bytes(conn.buffer[:end])
        del conn.buffer[:end + 4]
        conn.rendering = True
        self._waiting.pop(conn.sock, None)
        self._selector.unregister(conn.sock)
        self._pool.submit(self._render, conn, request, now)

    def _answer(self, conn: _Connection, payload: bytes, keep: bool, now: float) -> None:
        conn.rendering = False
        if self._connections.get(conn.sock) is not conn:
            return  # dropped meanwhile (the server is closing)
        conn.out, conn.sent, conn.keep = payload, 0, keep
        conn.deadline = now + self.write_timeout
        self._selector.register(conn.sock, selectors.EVENT_WRITE, None)
        self._write(conn.sock, now)

    def _write(self, sock: socket.socket, now: float) -> None:
        conn = self._connections.get(sock)
        if conn is None or not conn.out:
            return
        try:
            conn.sent += sock.send(memoryview(conn.out)[conn.sent:])
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(sock)
            return
        if conn.sent < len(conn.out):
            return
        conn.out, conn.sent = b"", 0
        if not conn.keep or self._stopping:
            self._drop(sock)
            return
        conn.deadline = now + self.idle_timeout
        self._waiting[sock] = None
        self._selector.modify(sock, selectors.EVENT_READ, None)
        self._next_request(conn, now)  # a pipelined request, already read

    def _drop(self, sock: socket.socket) -> None:
        self._connections.pop(sock, None)
        self._waiting.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        with contextlib.suppress(OSError):
            sock.close()

    # --- the workers -----------------------------------------------------------------------

    def _render(self, conn: _Connection, request: bytes, arrived: float) -> None:
        try:
            payload, keep = self._respond(request, arrived)
        except Exception:  # noqa: BLE001 - a request that cannot be answered ends its connection
            payload, keep = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n" \
                            b"Connection: close\r\n\r\n", False
        self._rendered.append((conn, payload, keep))
        self._wake()

    def _respond(self, request: bytes, arrived: float) -> tuple[bytes, bool]:
        """The answer to one request, and whether the connection stays open."""
        lines = request.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            return (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                    b"Connection: close\r\n\r\n", False)
        method, path, version = parts
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep = (version == "HTTP/1.1" and connection != "close") or \
            (version == "HTTP/1.0" and connection == "keep-alive")
        if "content-length" in headers or "transfer-encoding" in headers:
            keep = False  # a request body is not read: do not take it for the next request
        answer = respond(lambda om, gz: self._renderer.body(arrived, om, gz), method, path,
                         headers)
        head = [f"HTTP/1.1 {answer.status}", *(f"{k}: {v}" for k, v in answer.headers),
                f"Content-Length: {len(answer.body)}",
                "Connection: keep-alive" if keep else "Connection: close", "", ""]
        payload = "\r\n".join(head).encode("latin-1")
        if method != "HEAD":
            payload += answer.body
        return payload, keep
