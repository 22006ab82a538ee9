"""How many CPUs this process may run on: what the controller counts when it decides how
many processes of its own to start (parser workers, a report's second reader).

The CPUs of its affinity (``taskset``, ``numactl``, a container's cpuset): a controller
pinned to 2 CPUs of a 64-core machine has 2 to use, not 64. ``os.cpu_count()`` where there
is no affinity to ask (not Linux). Below every layer that starts processes (session/,
report/), beside errors and model: it imports nothing of benchtui's.
"""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on (at least 1)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # (not Linux)
        return os.cpu_count() or 1
