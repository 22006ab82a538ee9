"""A jump host as OpenSSH's ``ProxyJump`` writes one: ``[user@]host[:port]`` (``[v6addr]:port``
too). Pure: the plan loader checks the form when it reads a plan, the SSH transport uses the
parts."""

from __future__ import annotations

_EXAMPLE = 'write it as [user@]host[:port], e.g. "admin@bastion.example.com:2222"'


class JumpError(ValueError):
    """A jump host that is not ``[user@]host[:port]``: the sentence says which part."""

    def __init__(self, spec: str, reason: str) -> None:
        super().__init__(f"jump host {spec!r}: {reason}; {_EXAMPLE}")
        self.spec = spec
        self.reason = reason


def _port(spec: str, text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise JumpError(spec, f"its port {text!r} is not a port number (1 to 65535)")
    return int(text)


def parse_jump(spec: str) -> tuple[str | None, str, int | None]:
    """(user, host, port) of ``spec``; ``JumpError`` (a ``ValueError``) naming the wrong part."""
    if spec != spec.strip() or any(c.isspace() for c in spec):
        raise JumpError(spec, "it holds spaces")
    user, at, hostport = spec.rpartition("@")
    if at and not user:
        raise JumpError(spec, "the user before '@' is empty")
    host, port = hostport, None
    if hostport.startswith("["):
        host, close, rest = hostport[1:].partition("]")
        if not close:
            raise JumpError(spec, "its '[' has no ']'")
        if rest:
            if not rest.startswith(":"):
                raise JumpError(spec, f"{rest!r} follows the address")
            port = _port(spec, rest[1:])
    elif hostport.count(":") == 1:
        host, _, port_text = hostport.partition(":")
        port = _port(spec, port_text)
    elif ":" in hostport:
        raise JumpError(spec, "an IPv6 address goes in brackets, [addr]:port")
    if not host:
        raise JumpError(spec, "it has no host name")
    return user or None, host, port
