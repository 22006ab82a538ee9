"""The fixture with a real single-node Ceph (see tests/ceph.py). Enabled by adding
``"tests.conftest_ceph"`` to ``pytest_plugins`` in tests/conftest.py (or ``-p tests.conftest_ceph``
on the command line).

Where Ceph is not installed the tests that use it are skipped with the reason, except in CI
(``CI`` set, as ``scripts/setup test`` installs the Debian package ``ceph`` there), where that
is a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.ceph import SingleNodeCeph, ceph_unavailable


@pytest.fixture(scope="session")
def single_node_ceph() -> Iterator[SingleNodeCeph]:
    """One mon, one mgr and one bluestore OSD on 127.0.0.1, HEALTH_OK, with pool ``test``
    and the 1 GiB image ``rbd/bench``; ``.conf`` and ``.keyring`` for ``rados -c CONF``."""
    reason = ceph_unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; in CI scripts/setup test must install it as root")
        pytest.skip(reason)
    with SingleNodeCeph() as cluster:
        yield cluster
