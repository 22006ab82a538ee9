"""The hosts' facts (``Report.facts``: session -> host -> facts) as HTML tables: a row per
fact, a column per host, so that hosts that differ in a kernel, a scheduler or a tool
version stand side by side.

Facts are what ``session/facts.py`` gathered (or an imported session's map gave): nested
dicts and lists of plain values. Sizes (keys ending in ``_bytes``) are shown with binary
prefixes, the exact number on hover.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from benchtui.model.format import MISSING, format_bytes
from benchtui.report.model import Report


def _scalar(key: str, value: object) -> str:
    if value is None or value == "":
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float) and key.endswith("_bytes"):
        return f'<span title="{value} bytes">{escape(format_bytes(float(value)))}</span>'
    return escape(str(value))


def _inline(value: object) -> str:
    """A nested value on one line: ``name vda, size_bytes 256 GiB, ...``."""
    if isinstance(value, Mapping):
        return ", ".join(f"{escape(str(k))} {_inline_item(str(k), v)}" for k, v in
                         value.items())
    if isinstance(value, list | tuple):
        return "; ".join(_inline(v) for v in value)
    return _scalar("", value)


def _inline_item(key: str, value: object) -> str:
    if isinstance(value, Mapping | list | tuple):
        return "(" + _inline(value) + ")"
    return _scalar(key, value)


def fact_cell(key: str, value: object) -> str:
    """One fact's value as HTML: scalars as they are, a dict or list one line per item."""
    if isinstance(value, Mapping):
        if not value:
            return MISSING
        return "<ul>" + "".join(
            f"<li><b>{escape(str(k))}</b>: {_inline_item(str(k), v)}</li>"
            for k, v in value.items()) + "</ul>"
    if isinstance(value, list | tuple):
        if not value:
            return MISSING
        return "<ul>" + "".join(f"<li>{_inline(v)}</li>" for v in value) + "</ul>"
    return _scalar(key, value)


def facts_html(report: Report) -> list[str]:
    """The hosts section's body: one table per session (a sentence for a session without
    facts)."""
    out: list[str] = []
    for session in report.sessions:
        hosts: Mapping[str, Mapping[str, object]] = {
            h: f for h, f in report.facts.get(session, {}).items() if isinstance(f, Mapping)}
        if len(report.sessions) > 1:
            out.append(f"<h3>{escape(session)}</h3>")
        if not hosts:
            why = " (imported: the tools' output holds none)" if report.imported.get(
                session) else ""
            out.append(f"<p>No host facts were recorded{why}.</p>")
            continue
        keys: dict[str, None] = {}
        for facts in hosts.values():
            for k in facts:
                keys.setdefault(k)
        out.append('<div class="wide"><table class="facts"><thead><tr><th>fact</th>'
                   + "".join(f"<th>{escape(h)}</th>" for h in hosts) + "</tr></thead><tbody>")
        for k in keys:
            cells = "".join(f"<td>{fact_cell(k, f.get(k))}</td>" for f in hosts.values())
            out.append(f"<tr><th>{escape(k)}</th>{cells}</tr>")
        out.append("</tbody></table></div>")
    return out
