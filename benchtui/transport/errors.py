"""The transport's kinds of ``HostError``: whether trying again can help is what differs.

All are ``benchtui.errors.HostError``: ``str()`` is one sentence naming the host, with the way
to fix it in parentheses. ``transient`` tells the reconnect loop whether to try again.
"""

from __future__ import annotations

from typing import ClassVar

from benchtui.errors import HostError


class HostUnreachableError(HostError):
    """The host could not be reached or the link broke: refused, timed out, unreachable,
    connection lost. Trying again later may work."""

    transient: ClassVar[bool] = True


class HostGivenUpError(HostUnreachableError):
    """The host stayed unreachable for the whole reconnect window: the transport gave it up
    and tries no more (until ``connect`` or ``reconnect`` is called again)."""

    transient: ClassVar[bool] = False


class HostLookupError(HostError):
    """The host name does not resolve (a typo, or an alias missing from ~/.ssh/config)."""

    transient: ClassVar[bool] = False


class HostKeyError(HostError):
    """The host's key is not in known_hosts, or differs from the one recorded there.
    Never retried: a changed key may be an attack."""

    transient: ClassVar[bool] = False


class HostAuthError(HostError):
    """The host refused every key offered (identity file, ssh-agent, default keys)."""

    transient: ClassVar[bool] = False


class HostConfigError(HostError):
    """What the plan or the SSH config says cannot work: a jump host that is not
    ``[user@]host[:port]``, an identity file that is missing or unreadable. Trying again
    cannot help; the host itself may be fine."""

    transient: ClassVar[bool] = False


class HostCommandError(HostError):
    """A command on the host failed in a way the transport cannot hide (a run's files are
    missing, a short command timed out, a stop left processes behind)."""

    transient: ClassVar[bool] = False


def is_transient(error: BaseException) -> bool:
    """Whether trying again may succeed where ``error`` happened."""
    return bool(getattr(error, "transient", False))
