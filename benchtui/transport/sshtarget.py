"""Where and how to reach a host over SSH, and the known_hosts file: no asyncssh here.

``SshTarget`` holds the options benchtui honours (see docs/transport.md); what it leaves unset
comes from ``~/.ssh/config`` (``Host`` aliases, ``HostName``, ``Port``, ``User``,
``IdentityFile``, ``ProxyJump``), from ssh-agent (``SSH_AUTH_SOCK``) and from the default
keys in ``~/.ssh``, as with OpenSSH.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from benchtui.model.jump import parse_jump

DEFAULT_PORT = 22
#: The system-wide known_hosts file, read too when the target names no file of its own.
GLOBAL_KNOWN_HOSTS = Path("/etc/ssh/ssh_known_hosts")

#: The ciphers offered, first choice first (the client's order decides). The set is asyncssh's
#: default set; only the order differs from OpenSSH's, which puts chacha20-poly1305 first. With
#: AES-GCM (AES-NI on every x86 and arm64 server) asyncssh makes one AEAD call per packet;
#: with chacha20-poly1305 it builds two cipher objects per packet (2-3 points of a core for a
#: controller following 64 hosts: docs/transport.md). A ``Ciphers`` line in the user's ssh
#: config wins over this order.
PREFERRED_CIPHERS = (
    "aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com",
    "aes128-ctr", "aes192-ctr", "aes256-ctr",
)
_CIPHERS_LINE = re.compile(r"^\s*ciphers(?:\s+|\s*=)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class SshTarget:
    """One SSH host: an address or a ``~/.ssh/config`` alias, and optional overrides.

    ``jump`` is a ProxyJump host, ``[user@]host[:port]``; it is verified against the same
    known_hosts and offered the same keys. ``known_hosts`` defaults to
    ``~/.ssh/known_hosts``; with ``accept_new_host_keys`` an unknown host's key is trusted on
    first use and appended there (a *changed* key is still refused). ``config`` is an OpenSSH
    client config file (default ``~/.ssh/config``). ``identity`` is a private key file; when
    it is given, ssh-agent is used only if ``agent_path`` is given too.
    """

    host: str
    port: int | None = None
    user: str | None = None
    identity: str | None = None
    jump: str | None = None
    known_hosts: str | None = None
    accept_new_host_keys: bool = False
    config: str | None = None
    agent_path: str | None = None
    connect_timeout: float = 10.0
    keepalive_interval: float = 5.0
    keepalive_count_max: int = 3

    @property
    def where(self) -> str:
        """``host:port`` as the user would recognise it in a message."""
        return f"{self.host}:{self.port or DEFAULT_PORT}"

    def known_hosts_path(self) -> Path:
        """The file host keys are checked against and first-use keys written to."""
        return Path(self.known_hosts or Path.home() / ".ssh" / "known_hosts").expanduser()

    def known_hosts_text(self) -> str:
        """The trusted keys: ``known_hosts_path``, plus /etc/ssh/ssh_known_hosts by default."""
        text = read_known_hosts(self.known_hosts_path())
        if self.known_hosts is None:
            text += "\n" + read_known_hosts(GLOBAL_KNOWN_HOSTS)
        return text

    def config_path(self) -> Path:
        """The OpenSSH client config read for this target."""
        return Path(self.config or Path.home() / ".ssh" / "config").expanduser()

    def cipher_preference(self) -> tuple[str, ...] | None:
        """The ciphers to offer, in order: ``PREFERRED_CIPHERS``, or None (asyncssh then
        takes the user's ``Ciphers`` line) when the config file names its own."""
        return None if config_sets_ciphers(self.config_path()) else PREFERRED_CIPHERS

    def jump_target(self) -> SshTarget:
        """The jump host as a target with this target's keys and known_hosts
        (``JumpError``, a ``ValueError``, for a jump that is not ``[user@]host[:port]``)."""
        if not self.jump:
            raise ValueError("this target has no jump host")
        user, host, port = parse_jump(self.jump)
        return SshTarget(host=host, port=port, user=user, identity=self.identity,
                         known_hosts=self.known_hosts,
                         accept_new_host_keys=self.accept_new_host_keys, config=self.config,
                         agent_path=self.agent_path, connect_timeout=self.connect_timeout,
                         keepalive_interval=self.keepalive_interval,
                         keepalive_count_max=self.keepalive_count_max)


def config_sets_ciphers(path: Path) -> bool:
    """True when an OpenSSH client config file has a ``Ciphers`` line (in any ``Host``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(_CIPHERS_LINE.match(line) for line in text.splitlines())


def host_pattern(host: str, port: int | None) -> str:
    """How known_hosts names a host: ``host`` on port 22, ``[host]:port`` elsewhere."""
    return host if port in (None, DEFAULT_PORT) else f"[{host}]:{port}"


def read_known_hosts(path: Path) -> str:
    """The text of a known_hosts file; empty when it does not exist or cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        return ""


def append_known_host(path: Path, pattern: str, key_line: str) -> None:
    """Append ``pattern key_line`` to a known_hosts file (created 0600 in a 0700 directory)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a", encoding="utf-8") as stream:
        if stream.tell() > 0 and not path.read_bytes().endswith(b"\n"):
            stream.write("\n")
        stream.write(f"{pattern} {key_line}\n")


def unknown_key_hint(host: str, port: int | None, path: Path) -> str:
    """How to trust a host whose key is not known yet."""
    port_opt = f"-p {port} " if port not in (None, DEFAULT_PORT) else ""
    return (f"check the key and add it with `ssh-keyscan {port_opt}{host} >> {path}`, "
            f"or run with --accept-new-host-keys to trust it on first use")


def changed_key_hint(pattern: str, path: Path) -> str:
    """What to do when a host's key differs from the recorded one."""
    return (f"if the host was reinstalled, remove the old key with "
            f"`ssh-keygen -R '{pattern}' -f {path}` and connect again; "
            f"otherwise someone may be intercepting the connection")
