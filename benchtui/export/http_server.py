"""The ``/metrics`` HTTP server: bursts of scrapes, idle connections and slow clients, bounded.

One thread waits on every connection with a selector (``selectors``): accepting, reading
requests until their header is complete, and closing connections that stay idle or send half
a request for longer than ``idle_timeout``. Only complete requests go to a small pool of
worker threads (``workers``), which render the answer and write it (a client that does not
read it within ``write_timeout`` is dropped). So threads are bounded (1 + ``workers``) however
many connections are open, idle ones cost a file descriptor and no thread, and a slowloris
client cannot hold a worker. Connections beyond ``max_connections`` are closed at once.

The listening socket has a backlog of ``BACKLOG`` (the kernel caps it at ``somaxconn``), so a
burst of scrapers (several Prometheus servers, a federation, a dashboard reload) is queued,
not left to SYN retransmits (the old backlog of 5 made 25 of 50 simultaneous scrapes wait
1 s). HTTP/1.1 keep-alive is kept (Prometheus reuses its connection); HTTP/1.0 closes.

It runs on its own daemon threads, so a scrape never waits for the event loop that runs the
session, and the session never waits for a scrape. Scrapes that arrive together share one
rendering that started after they arrived (``fresh_render``): a burst costs about two
renderings, and no answer is older than its request.
"""

from __future__ import annotations

import contextlib
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
#: Seconds a worker waits for a client to take the answer.
WRITE_TIMEOUT = 10.0
#: Threads that render and write answers.
WORKERS = 4
#: Connections open at once; more are closed as they come.
MAX_CONNECTIONS = 1024
#: Largest request header read (bytes): a scrape's is a few hundred.
MAX_HEADER = 16 * 1024


@dataclass(slots=True)
class _Connection:
    sock: socket.socket
    deadline: float
    buffer: bytearray = field(default_factory=bytearray)


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
        self.max_connections = max_connections
        bound: tuple[Any, ...] = tuple(listener.getsockname())
        self.host = str(bound[0])
        self.port = int(bound[1])
        self.address = f"[{self.host}]:{self.port}" if ":" in self.host \
            else f"{self.host}:{self.port}"
        self._selector = selectors.DefaultSelector()
        self._selector.register(listener, selectors.EVENT_READ, None)
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, None)
        self._connections: dict[socket.socket, _Connection] = {}
        #: Keep-alive connections a worker hands back to the selector thread.
        self._returned: deque[socket.socket] = deque()
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
        """Connections open now (waiting in the selector or being answered)."""
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

    # --- the selector thread ---------------------------------------------------------------

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _loop(self) -> None:
        sweep_every = min(1.0, self.idle_timeout / 4)
        next_sweep = time.monotonic() + sweep_every
        while not self._stopping:
            events = self._selector.select(timeout=min(1.0, self.idle_timeout / 2))
            now = time.monotonic()
            for key, _mask in events:
                sock = key.fileobj
                if sock is self._listener:
                    self._accept(now)
                elif sock is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                elif isinstance(sock, socket.socket):
                    self._read(sock)
            while self._returned:
                sock = self._returned.popleft()
                conn = self._connections.get(sock)
                if conn is not None:
                    conn.deadline = now + self.idle_timeout
                    self._selector.register(sock, selectors.EVENT_READ, None)
                    if b"\r\n\r\n" in conn.buffer:  # a pipelined request, already read
                        self._take_request(sock, conn)
            if now >= next_sweep:  # not at every wake-up: a burst wakes it hundreds of times
                next_sweep = now + sweep_every
                for sock, conn in list(self._connections.items()):
                    if conn.deadline < now and self._is_waiting(sock):
                        self._drop(sock)

    def _is_waiting(self, sock: socket.socket) -> bool:
        try:
            self._selector.get_key(sock)
        except KeyError:
            return False  # a worker is answering it
        return True

    def _accept(self, now: float) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return  # e.g. out of file descriptors: the next select retries
            if len(self._connections) >= self.max_connections:
                sock.close()
                continue
            sock.setblocking(False)
            self._connections[sock] = _Connection(sock, now + self.idle_timeout)
            self._selector.register(sock, selectors.EVENT_READ, None)

    def _read(self, sock: socket.socket) -> None:
        conn = self._connections.get(sock)
        if conn is None:
            return
        try:
            data = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(sock)
            return
        if not data:
            self._drop(sock)
            return
        conn.buffer += data
        if b"\r\n\r\n" in conn.buffer:
            self._take_request(sock, conn)
        elif len(conn.buffer) > MAX_HEADER:
            self._drop(sock)

    def _take_request(self, sock: socket.socket, conn: _Connection) -> None:
        """Hand the first complete request of ``conn`` to a worker."""
        end = conn.buffer.find(b"\r\n\r\n")
        request = bytes(conn.buffer[:end])
        del conn.buffer[:end + 4]
        self._selector.unregister(sock)
        self._pool.submit(self._answer, sock, request, time.monotonic())

    def _drop(self, sock: socket.socket) -> None:
        self._connections.pop(sock, None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        with contextlib.suppress(OSError):
            sock.close()

    # --- the workers -----------------------------------------------------------------------

    def _answer(self, sock: socket.socket, request: bytes, arrived: float) -> None:
        keep = False
        try:
            keep = self._respond(sock, request, arrived)
        except Exception:  # noqa: BLE001 - a bad request or a gone client ends its connection
            keep = False
        if keep and not self._stopping:
            sock.setblocking(False)
            self._returned.append(sock)
            self._wake()
        else:
            self._connections.pop(sock, None)
            with contextlib.suppress(OSError):
                sock.close()

    def _respond(self, sock: socket.socket, request: bytes, arrived: float) -> bool:
        """Answer one request; True when the connection stays open."""
        lines = request.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            sock.settimeout(self.write_timeout)
            sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
            return False
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
        sock.settimeout(self.write_timeout)
        sock.sendall(payload)
        return keep
