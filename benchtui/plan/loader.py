"""Loading a TOML plan: ``load_plan(path) -> Plan``, or one ``PlanError`` that says where.

The loader reads the plan file and the jobfiles it names, and nothing else. Every problem is
reported as a ``PlanError`` carrying the file, the line of the offending key or table, what is
wrong and what to write instead; no input makes it raise anything else. The format is
documented in ``docs/plans.md``; steps and monitors are read by ``loader_steps``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from benchtui.errors import PlanError
from benchtui.model.fio_buckets import DEFAULT_BITS, FIO_PLAT_BITS, MIN_BITS
from benchtui.model.jump import JumpError, parse_jump
from benchtui.plan.fields import NAME, Fields, Source, checked_name, closest, shown, type_name
from benchtui.plan.grace import DEFAULT_CONTROLLER_GRACE, parse_grace, parse_window
from benchtui.plan.loader_steps import HostNames, read_monitors, read_steps
from benchtui.plan.locate import syntax_error
from benchtui.plan.model import (
    DEFAULT_DEADLINE,
    DEFAULT_DEADLINE_MARGIN,
    DEFAULT_REMOTE_DIR,
    HostSpec,
    Plan,
    Settings,
)

SESSION_KEYS = {
    "name": 'name = "nvme-qd-sweep"',
    "description": 'description = "queue depth sweep on the new NVMe drives"',
    "remote_dir": f'remote_dir = "{DEFAULT_REMOTE_DIR}"',
    "deadline_margin": f"deadline_margin = {DEFAULT_DEADLINE_MARGIN:g}",
    "default_deadline": f"default_deadline = {DEFAULT_DEADLINE:g}",
    "histogram_bits": f"histogram_bits = {DEFAULT_BITS} (1 to {FIO_PLAT_BITS}; "
                      f"{FIO_PLAT_BITS} keeps fio's own resolution)",
    "controller_grace": f'controller_grace = "{DEFAULT_CONTROLLER_GRACE:g}s" (or "5m"; 0 '
                        'stops at once; "off" leaves the processes to their deadline)',
    "reconnect_window": 'reconnect_window = "2m" (how long a host may stay unreachable '
                        'before it is given up)',
}
HOST_KEYS = {
    "address": 'address = "10.0.0.11"',
    "ssh": 'ssh = "db1"',
    "user": 'user = "root"',
    "port": "port = 22",
    "identity": 'identity = "~/.ssh/id_ed25519"',
    "jump": 'jump = "bastion.example.com"',
    "local": "local = true",
    "allow_destructive": 'allow_destructive = ["/dev/nvme1n1"]',
    "labels": 'labels = { rack = "r12" }',
}
_REMOTE_ONLY = ("address", "ssh", "user", "port", "identity", "jump")
TOP_LEVEL = {"session": "[session]", "hosts": "[hosts.NAME]", "monitor": "[[monitor]]",
             "step": "[[step]]"}


def load_plan(path: str | Path, *, parser_names: Collection[str] | None = None) -> Plan:
    """Read and check the plan at ``path``. ``parser_names``, when given, are the parser
    names ``parser =`` may take (the session passes the parser registry's)."""
    path = Path(path)
    file = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise PlanError(file, "no such file", hint="give the path of a TOML plan (benchtui "
                        "examples lists some; docs/plans.md describes the format)") from None
    except IsADirectoryError:
        raise PlanError(file, "is a directory, not a plan file",
                        hint="give the path of a .toml plan") from None
    except OSError as error:
        raise PlanError(file, f"cannot be read: {error.strerror or error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise PlanError(file, f"is not UTF-8 text (byte {error.start})", line,
                        "a plan is a TOML text file") from None
    return parse_plan(text, path, parser_names=parser_names)


def parse_plan(text: str, path: str | Path, *, parser_names: Collection[str] | None = None
               ) -> Plan:
    """Check a plan's ``text``; ``path`` names it in messages and anchors relative paths."""
    path = Path(path)
    source = Source(str(path), text)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise syntax_error(str(path), text, error) from None
    except RecursionError:
        raise PlanError(str(path), "TOML syntax error: values are nested too deeply", None,
                        "a plan needs no more than a few levels of tables and lists") from None
    _check_top_level(source, doc)
    settings = _read_settings(source, doc.get("session", {}), path)
    hosts = _read_hosts(source, doc.get("hosts"))
    names = HostNames(hosts)
    base = path.parent
    monitors = read_monitors(source, doc.get("monitor", []), names, parser_names)
    steps = read_steps(source, doc.get("step", []), names, parser_names, base)
    if not steps and not monitors:
        raise PlanError(str(path), "the plan has no [[step]] and no [[monitor]]", None,
                        'add a step, e.g. [[step]] tool = "fio" hosts = "all" args = "..."')
    return Plan(settings.name, path, hosts, tuple(monitors), tuple(steps), settings)


def _check_top_level(source: Source, doc: Mapping[str, Any]) -> None:
    for key, value in doc.items():
        if key in TOP_LEVEL:
            continue
        if key in SESSION_KEYS:
            raise source.error((key,), f"'{key}' is outside of any table",
                               f"put it under [session]: [session] {SESSION_KEYS[key]}")
        if key in HOST_KEYS:
            raise source.error((key,), f"'{key}' is outside of any table",
                               f"put it under the host's table: [hosts.NAME] {HOST_KEYS[key]}")
        guess = closest(key, TOP_LEVEL)
        what = "table" if isinstance(value, dict | list) else "key"
        hint = (f"did you mean '{guess}' (written {TOP_LEVEL[guess]})?" if guess
                else "a plan holds [session], [hosts.NAME], [[monitor]] and [[step]]")
        raise source.error((key,), f"unknown {what} '{key}' at the top of the plan", hint)
    for key in ("monitor", "step"):
        if key in doc and not isinstance(doc[key], list):
            raise source.error((key,), f"{key} must be written [[{key}]] (double brackets), "
                               f"not [{key}]", f"one [[{key}]] per {key}; each may appear "
                               "many times")
    for key in ("session", "hosts"):
        if key in doc and not isinstance(doc[key], dict):
            raise source.error((key,), f"{key} must be a table, not {type_name(doc[key])} "
                               f"({shown(doc[key])})", f"write {TOP_LEVEL[key]}")


def _read_settings(source: Source, table: Mapping[str, Any], path: Path) -> Settings:
    fields = Fields(source, table, ("session",), "[session]", SESSION_KEYS)
    fields.check_keys()
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-._")[:64] or "plan"
    name = checked_name(fields, "name", fields.text("name", stem) or stem)
    remote_dir = fields.text("remote_dir", DEFAULT_REMOTE_DIR) or DEFAULT_REMOTE_DIR
    if not remote_dir.startswith("/"):
        raise fields.error("remote_dir", f"remote_dir {shown(remote_dir)} of [session] must "
                                         "be an absolute path", fields.example("remote_dir"))
    return Settings(
        name=name,
        description=fields.text("description", "", empty_ok=True) or "",
        remote_dir=remote_dir.rstrip("/") or "/",
        deadline_margin=fields.seconds("deadline_margin", DEFAULT_DEADLINE_MARGIN,
                                       zero_ok=True) or 0.0,
        default_deadline=fields.seconds("default_deadline", DEFAULT_DEADLINE)
        or DEFAULT_DEADLINE,
        histogram_bits=fields.whole("histogram_bits", DEFAULT_BITS, MIN_BITS,
                                    FIO_PLAT_BITS) or DEFAULT_BITS,
        controller_grace=_controller_grace(fields),
        reconnect_window=_reconnect_window(fields),
    )


def _identity(fields: Fields, host: str) -> Path | None:
    """The host's identity file, which must be a readable file on this machine (the one that
    connects): found missing here, it is a plan error with its line, not an SSH failure."""
    text = fields.text("identity")
    if not text:
        return None
    path = Path(text).expanduser()
    hint = ("give the private key's path (~ is expanded), or leave identity out to use "
            "ssh-agent and ~/.ssh")
    if not path.exists():
        raise fields.error("identity", f'the identity file {path} of host "{host}" does not '
                           "exist", hint)
    if not path.is_file():
        raise fields.error("identity", f'the identity file {path} of host "{host}" is not a '
                           "file", hint)
    if not os.access(path, os.R_OK):
        raise fields.error("identity", f'the identity file {path} of host "{host}" cannot be '
                           "read (permission denied)", "check its owner and mode (chmod 600)")
    return path


def _controller_grace(fields: Fields) -> float:
    if not fields.has("controller_grace"):
        return DEFAULT_CONTROLLER_GRACE
    value = fields.table["controller_grace"]
    try:
        return parse_grace(value)
    except ValueError:
        raise fields.error("controller_grace", f"controller_grace {shown(value)} of "
                           "[session] is not a duration", fields.example("controller_grace")
                           ) from None


def _reconnect_window(fields: Fields) -> float | None:
    if not fields.has("reconnect_window"):
        return None
    value = fields.table["reconnect_window"]
    try:
        return parse_window(value)
    except ValueError as exc:
        raise fields.error("reconnect_window", f"reconnect_window {shown(value)} of [session] "
                           f"{exc}", fields.example("reconnect_window")) from None


def _read_hosts(source: Source, table: Mapping[str, Any] | None) -> dict[str, HostSpec]:
    if not table:
        raise PlanError(source.file, "the plan defines no hosts", source.line(("hosts",)),
                        "add one, e.g. [hosts.here] local = true, or [hosts.db1] "
                        'address = "10.0.0.11"')
    hosts: dict[str, HostSpec] = {}
    for name, value in table.items():
        path = ("hosts", name)
        if not isinstance(value, dict):
            raise source.error(path, f"host '{name}' must be a table, not {type_name(value)} "
                                     f"({shown(value)})",
                               f"write [hosts.{name}] and under it address = {shown(value)}")
        hosts[name] = _read_host(source, name, value)
    return hosts


def _read_host(source: Source, name: str, table: Mapping[str, Any]) -> HostSpec:
    fields = Fields(source, table, ("hosts", name), f'host "{name}"', HOST_KEYS)
    if name == "all":
        raise fields.error(None, "'all' cannot be a host name: hosts = \"all\" means every host",
                           "give the host another name, e.g. [hosts.all1]")
    if not NAME.fullmatch(name):
        raise fields.error(None, f"host name {shown(name)} may hold only letters, digits, '.', "
                                 "'_' and '-' (64 at most, the first a letter or digit)",
                           "rename the table; the address goes in address = \"...\"")
    fields.check_keys()
    local = fields.flag("local")
    if local:
        for key in _REMOTE_ONLY:
            if fields.has(key):
                raise fields.error(key, f'host "{name}" has local = true and also {key}',
                                   f"a local host is this machine, reached without SSH: "
                                   f"remove {key}, or remove local = true")
    address = fields.text("address")
    alias = fields.text("ssh")
    if address is not None and alias is not None:
        raise fields.error("ssh", f'host "{name}" has both address and ssh',
                           "give address (and user, port, ...) or ssh = an OpenSSH config "
                           "alias that holds them, not both")
    if not local and address is None and alias is None:
        raise fields.error(None, f'host "{name}" says neither where it is nor that it is local',
                           f'add address = "10.0.0.11", or ssh = "{name}" (an alias from '
                           "~/.ssh/config), or local = true")
    for key, value in (("address", address), ("ssh", alias)):
        if value is not None and (value != value.strip() or any(c.isspace() for c in value)):
            raise fields.error(key, f"{key} {shown(value)} of host \"{name}\" holds spaces",
                               fields.example(key))
    identity = _identity(fields, name)
    jump = fields.text("jump")
    if jump is not None:
        try:
            parse_jump(jump)
        except JumpError as exc:
            raise fields.error("jump", f'host "{name}": {exc.spec!r} is not a jump host: '
                               f"{exc.reason}", 'write jump = "[user@]host[:port]", e.g. '
                               'jump = "admin@bastion.example.com:2222"') from None
    allowed = fields.text_list("allow_destructive") or []
    for device in allowed:
        if not device.startswith("/dev/") or len(device) <= 5:
            raise fields.error("allow_destructive",
                               f"allow_destructive of host \"{name}\" lists {shown(device)}, "
                               "which is not a device path", fields.example("allow_destructive"))
    return HostSpec(
        name=name, address=address, ssh_alias=alias, user=fields.text("user"),
        port=fields.whole("port", None, 1, 65535),
        identity=identity, jump=jump, local=local, allow_destructive=tuple(allowed),
        labels=fields.text_table("labels"), line=source.line(("hosts", name)))
