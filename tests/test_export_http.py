"""The /metrics endpoint: real sockets, real HTTP; the address rules, a port in use, the
warning when other machines can reach it, and the content Prometheus negotiates."""

from __future__ import annotations

import contextlib
import gzip
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchtui.cli.serve_cmd import exporting
from benchtui.errors import ExportError, UsageError
from benchtui.export.http import (
    exposure_warning,
    is_loopback,
    parse_listen,
    wants_openmetrics,
)
from benchtui.export.http_server import MetricsServer
from benchtui.export.prometheus import FleetCollector
from benchtui.store.fleet import FleetState
from tests.export_support import fixture_samples


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:9464", ("127.0.0.1", 9464)),
    ("0.0.0.0:80", ("0.0.0.0", 80)),
    (":9000", ("127.0.0.1", 9000)),
    ("9000", ("127.0.0.1", 9000)),
    ("[::1]:9464", ("::1", 9464)),
    ("localhost:0", ("localhost", 0)),
])
def test_parse_listen(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text", ["127.0.0.1:", "127.0.0.1:http", "1.2.3.4:70000", "::1:9464",
                                  "host:port:9"])
def test_parse_listen_refuses_what_is_not_host_port(text: str) -> None:
    with pytest.raises(UsageError) as exc:
        parse_listen(text)
    assert text in str(exc.value) and "\n" not in str(exc.value)


def test_loopback_or_not() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("127.3.2.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("10.1.1.1")
    assert exposure_warning("127.0.0.1:9464", "127.0.0.1") is None
    warning = exposure_warning("0.0.0.0:9464", "0.0.0.0")
    assert warning is not None and "unauthenticated" in warning


#: What Prometheus 2.42 sends when it scrapes.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                     "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


@pytest.mark.parametrize(("accept", "openmetrics"), [
    (PROMETHEUS_ACCEPT, True),
    ("application/openmetrics-text", True),
    ("application/openmetrics-text; version=2.0.0", False),
    ("text/plain;version=0.0.4", False),
    ("", False),
    ("*/*", False),
])
def test_format_negotiation(accept: str, openmetrics: bool) -> None:
    assert wants_openmetrics(accept) is openmetrics


def _get(url: str, accept: str | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_serves_metrics_in_both_formats_and_releases_the_port() -> None:
    state = FleetState("demo", ["db1"])
    state.on_samples(fixture_samples("disk/real_sysstat12_x_t_iso_y.txt", "db1"))
    collector = FleetCollector(state)
    with MetricsServer(collector, "127.0.0.1", 0) as server:
        assert server.url == f"http://127.0.0.1:{server.port}/metrics"
        status, ctype, body = _get(server.url)
        assert status == 200 and ctype.startswith("text/plain")
        assert 'benchtui_session_info{session="demo"} 1.0' in body
        status, ctype, body = _get(server.url, "application/openmetrics-text; version=1.0.0")
        assert status == 200 and ctype.startswith("application/openmetrics-text")
        assert body.endswith("# EOF\n")
        request = urllib.request.Request(server.url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            unzipped = gzip.decompress(response.read()).decode()
        assert unzipped.splitlines()[:3] == _get(server.url)[2].splitlines()[:3]
        assert _get(server.url.removesuffix("metrics"))[0] == 200
        assert _get(server.url.replace("/metrics", "/other"))[0] == 404
        port = server.port
    # The port is free once the server is closed: the next run can serve on it at once.
    with MetricsServer(collector, "127.0.0.1", port) as again:
        assert _get(again.url)[0] == 200


def test_a_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ExportError) as exc:
            MetricsServer(FleetCollector(FleetState()), "127.0.0.1", port)
    assert str(exc.value) == (
        f"cannot serve metrics on 127.0.0.1:{port}: the port is already in use by another "
        "program; stop that program or choose another port (e.g. --listen 127.0.0.1:9465, "
        "or --export)")
    assert exc.value.exit_code == 2


def test_an_address_not_on_this_machine_is_one_clear_error() -> None:
    with pytest.raises(ExportError) as exc:
        MetricsServer(FleetCollector(FleetState()), "192.0.2.1", 0)  # TEST-NET-1
    assert "not one of this machine's" in str(exc.value)


def test_exporting_warns_when_other_machines_can_read(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    state = FleetState("demo")
    with exporting(state, "127.0.0.1:0"):
        pass
    assert "warning" not in capsys.readouterr().err
    with exporting(state, "0.0.0.0:0"):
        assert state.sample_listeners  # the collector listens while exporting
    err = capsys.readouterr().err
    assert "benchtui: serving metrics on http://0.0.0.0:" in err
    assert ("benchtui: warning: metrics are served on 0.0.0.0:" in err
            and "the data is unauthenticated" in err)
    assert not state.sample_listeners


def test_serve_with_the_port_taken_exits_2_with_one_sentence(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[hosts.here]\nlocal = true\n\n[[step]]\nname = "s"\ntool = "fio"\n'
                    'args = "--filename=/tmp/x --size=1m --rw=read --runtime=1"\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "benchtui", "serve", str(plan),
                               "--listen", f"127.0.0.1:{port}"], capture_output=True,
                              text=True, timeout=60, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"benchtui: cannot serve metrics on 127.0.0.1:{port}: the port is "
                           "already in use by another program; stop that program or choose "
                           "another port (e.g. --listen 127.0.0.1:9465, or --export)\n")
    assert done.stdout == ""


class _Tiny:
    def render(self, *, openmetrics: bool = False) -> bytes:
        return b"benchtui_x 1\n"


def _listen_backlog(port: int) -> int:
    """The listening socket's backlog as the kernel holds it (``ss``: Send-Q)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[2])


def _raw_get(port: int, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_bursts_idle_and_half_sent_connections_and_threads_are_bounded() -> None:
    import threading

    before = threading.active_count()
    with MetricsServer(_Tiny(), "127.0.0.1", 0, idle_timeout=0.5, workers=3,
                       max_connections=300) as server:
        if shutil.which("ss"):
            assert _listen_backlog(server.port) >= 128
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(100)]
        half = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
        for sock in half:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never finished
        # While they are open, scrapes are answered, and threads stay bounded.
        for _ in range(5):
            assert _raw_get(server.port).endswith(b"benchtui_x 1\n")
        assert threading.active_count() - before <= 1 + 3
        # Keep-alive: two requests on one connection.
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            for _ in range(2):
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
                head = sock.recv(65536)
                assert head.startswith(b"HTTP/1.1 200 OK") and b"keep-alive" in head
        # Idle and half-sent connections are closed after the timeout: the client reads EOF.
        time.sleep(1.6)
        for sock in idle + half:
            sock.settimeout(2)
            assert sock.recv(10) == b""
            sock.close()
        assert server.open_connections == 0
        # More connections than allowed are closed at once; the server goes on.
        many = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(320)]
        time.sleep(0.3)
        assert server.open_connections <= 300
        for sock in many:
            sock.close()
        assert _raw_get(server.port).endswith(b"benchtui_x 1\n")
    assert threading.active_count() <= before + 1


def test_scrapes_that_arrive_together_share_one_fresh_rendering() -> None:
    import threading

    from benchtui.export.fresh_render import FreshRenderer

    started: list[float] = []
    gate = threading.Event()

    def render(openmetrics: bool, gzipped: bool) -> bytes:
        started.append(time.monotonic())
        gate.wait(5)
        return str(len(started)).encode()

    renderer = FreshRenderer(render)
    first_arrival = time.monotonic()
    answers: list[bytes] = []
    first = threading.Thread(target=lambda: answers.append(
        renderer.body(first_arrival, False, False)))
    first.start()
    while not started:
        time.sleep(0.001)
    # 20 requests arrive while rendering 1 runs: they need a rendering that starts later.
    late = time.monotonic()
    others = [threading.Thread(target=lambda: answers.append(renderer.body(late, False, False)))
              for _ in range(20)]
    for t in others:
        t.start()
    time.sleep(0.05)
    gate.set()
    for t in (first, *others):
        t.join(5)
    assert len(started) == 2  # one for the first, one shared by the 20
    assert answers.count(b"1") == 1 and answers.count(b"2") == 20
    assert all(s >= first_arrival for s in started) and started[1] >= late


class _Big:
    """A body of ~400 KiB: more than a slow reader's socket buffers hold."""

    def render(self, *, openmetrics: bool = False) -> bytes:
        return b"".join(b"benchtui_x{n=\"%d\"} 1\n" % n for n in range(20000))


def _slow_reader(port: int, pipelined: int = 64) -> socket.socket:
    """Asks for ``pipelined`` answers at once, with a 1 KiB receive buffer, and never reads."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", port))
    sock.setblocking(False)
    with contextlib.suppress(BlockingIOError):
        sock.send(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * pipelined)
    return sock


def _scrape_within(port: int, seconds: float) -> bytes:
    """A well-behaved scrape whose every step must end within ``seconds``."""
    start = time.monotonic()
    data = _raw_get(port, timeout=seconds)
    assert time.monotonic() - start < seconds
    return data


def test_idle_connections_and_slow_readers_hold_no_scrape() -> None:
    # Issue 27: with 1,100 idle connections open, scrapes were reset; 16 slow readers
    # (pipelined GETs, 1 KiB receive buffers, never reading) made them wait 9-10 s.
    import threading

    before = threading.active_count()
    with MetricsServer(_Big(), "127.0.0.1", 0, max_connections=1000, write_timeout=1.0,
                       workers=4) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(1100)]
        slow = [_slow_reader(server.port) for _ in range(16)]
        time.sleep(0.3)  # their first answers fill their windows
        for _ in range(10):
            assert _scrape_within(server.port, 1.0).startswith(b"HTTP/1.1 200 OK")
        assert server.open_connections <= 1000
        assert threading.active_count() - before <= 1 + 4
        # The oldest idle connections were shed for the new ones (the first reads EOF), the
        # newest are still open; the slow readers are closed once their write time is up.
        idle[0].settimeout(2)
        assert idle[0].recv(10) == b""
        held = server.open_connections
        idle[-1].setblocking(False)
        with pytest.raises(BlockingIOError):
            idle[-1].recv(10)
        time.sleep(2.5)
        assert server.open_connections == held - 16
        assert _scrape_within(server.port, 1.0).endswith(b"1\n")
        for sock in idle + slow:
            sock.close()


_SERVER_OUT_OF_FILES = """
import os, resource, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
from benchtui.export.http_server import MetricsServer
class Tiny:
    def render(self, *, openmetrics=False):
        return b"benchtui_x 1\\n"
server = MetricsServer(Tiny(), "127.0.0.1", 0)
taken = [os.open(os.devnull, os.O_RDONLY) for _ in range(200)]  # the session's own files
print(server.port, server.max_connections, flush=True)
sys.stdin.read()
server.close()
"""


def test_a_server_out_of_file_descriptors_sheds_idle_connections() -> None:
    # With an open-file limit of 256 (many systems give 1024), the server holds at most 128
    # connections; here the rest of the process took all but ~50 descriptors, so accept()
    # fails with EMFILE first: idle connections are shed for the scrape, never a busy loop.
    proc = subprocess.Popen([sys.executable, "-c", _SERVER_OUT_OF_FILES], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port, limit = map(int, proc.stdout.readline().split())
        assert limit == 128
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(300)]
        time.sleep(0.3)
        for _ in range(5):
            assert _scrape_within(port, 1.0).endswith(b"benchtui_x 1\n")
        for sock in idle:
            sock.close()
        cpu = psutil_cpu_seconds(proc.pid)
        time.sleep(1.0)
        assert psutil_cpu_seconds(proc.pid) - cpu < 0.5  # idle again: no accept() spinning
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)


def psutil_cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)
