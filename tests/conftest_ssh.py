"""Fixtures with real OpenSSH sshd hosts (see tests/sshd.py). Enabled by
``pytest_plugins = ["tests.conftest_ssh"]`` in tests/conftest.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sshd import NetnsLab, SshdFleet, SshdHost, netns_unavailable, sshd_unavailable

#: How many loopback hosts ``sshd_hosts`` starts, and how many namespace hosts ``netns_lab``.
LOOPBACK_HOSTS = 3
NETNS_HOSTS = 2


@pytest.fixture(scope="session")
def sshd_fleet() -> Iterator[SshdFleet]:
    """Three real sshd on 127.0.0.1 (free ports), one client key, one known_hosts."""
    reason = sshd_unavailable()
    if reason:
        pytest.skip(reason)
    fleet = SshdFleet()
    try:
        for index in range(1, LOOPBACK_HOSTS + 1):
            fleet.start(f"h{index}")
        yield fleet
    finally:
        fleet.close()


@pytest.fixture(scope="session")
def sshd_hosts(sshd_fleet: SshdFleet) -> list[SshdHost]:
    """The loopback hosts of ``sshd_fleet``: name, address, port, user, identity,
    known_hosts, host key; ``host.target()`` makes an ``SshTarget``. Only the ones the
    fleet was made with: a test may start (and kill, or freeze) hosts of its own on the same
    fleet (test_host_loss.py), and a later test's first request must not get them."""
    return list(sshd_fleet.hosts[:LOOPBACK_HOSTS])


@pytest.fixture(scope="session")
def netns_lab() -> Iterator[NetnsLab]:
    """Two hosts in network namespaces (10.213.0.11, .12; sshd on port 22 each) whose links
    a test can cut and restore. Skipped where ``ip netns`` is not permitted."""
    reason = netns_unavailable()
    if reason:
        pytest.skip(reason)
    fleet = SshdFleet()
    lab: NetnsLab | None = None
    try:
        lab = NetnsLab(fleet, NETNS_HOSTS)
        yield lab
    finally:
        if lab is not None:
            lab.close()
        fleet.close()
