"""The HTML report's steadiness box beside a step's plots: each host's verdict (the IOPS of
the last half of its window: ``steady.py``), or past ``spread.MANY_HOSTS`` hosts how many
are steady and then each host that is not (docs/report-html.md, "Many hosts")."""

from __future__ import annotations

from html import escape

from benchtui.report.markdown import row_name
from benchtui.report.model import Row
from benchtui.report.spread import MANY_HOSTS


def steadiness_items(rows: tuple[Row, ...]) -> str:
    """The ``<li>`` items of a step's steadiness box."""
    if not any(v.metric == "iops" for r in rows for v in r.values):
        return ('<li class="unknown">not judged: steadiness is a test of per-second IOPS, '
                "which this step's tool does not give</li>")
    if all(r.steadiness is None for r in rows):
        return '<li class="unknown">no verdict (no per-second IOPS, or too few points)</li>'
    if len(rows) > MANY_HOSTS:
        return steadiness_summary(rows)
    return "".join(_steadiness(r) for r in rows)


def _steadiness(row: Row) -> str:
    s = row.steadiness
    who = escape(row_name(row, 1))
    if s is None:
        return (f'<li class="unknown"><b>{who}</b>: no verdict (no per-second IOPS, or too '
                "few points)</li>")
    numbers = f"CV {s.cv:.0%}, trend {s.trend:+.0%} over {s.points} s"
    if s.steady:
        return f'<li class="yes"><b>{who}</b>: ✓ steady<br><small>{numbers}</small></li>'
    reason = escape(s.describe().split(": ", 1)[1])
    return (f'<li class="no"><b>{who}</b>: ✗ NOT steady: {reason}<br>'
            f"<small>{numbers}</small></li>")


def steadiness_summary(rows: tuple[Row, ...]) -> str:
    """Many hosts' verdicts: how many are steady, then every host that is not (or has no
    verdict), each as ``_steadiness`` says it."""
    steady = sum(1 for r in rows if r.steadiness is not None and r.steadiness.steady)
    others = [r for r in rows if r.steadiness is None or not r.steadiness.steady]
    return (f'<li class="{"yes" if not others else "unknown"}"><b>{steady} of {len(rows)} '
            f"hosts</b> steady</li>" + "".join(_steadiness(r) for r in others))
