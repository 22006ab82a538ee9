"""``history analyze --format html``: one self-contained page (no script, no external
file, like the report's): per series, every point (hollow when not analysed: excluded, or
from a step that did not complete), the levels between change points with a band of one
standard deviation, change markers with their figures, environment changes, and a link
from each point to its session's report. Drawn as SVG here (matplotlib stays in
``report/plot``)."""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from pathlib import Path

from benchtui.history.analysis import Analysed
from benchtui.history.catalog import Catalog
from benchtui.history.render import p_text, series_labels, value, verdict, when

W, H = 760, 200
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 18, 28

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: left; }
.regression { color: #b00020; } .improvement { color: #1b7f3b; }
svg text { font-size: 11px; fill: #333; }
figure { margin: 1.2em 0; } figcaption { font-weight: 600; }
"""


def _link(template: str | None, path: str, session: str, run: int) -> str:
    if template:
        return template.format(path=path, session=session, run=run)
    report = Path(path + ".html")
    return report.as_uri() if report.is_absolute() and report.exists() \
        else Path(path).as_uri() if Path(path).is_absolute() else path


def _svg(a: Analysed, link: str | None, annotations: dict[int, str]) -> str:
    pts = a.points
    vals = [p.value for p in pts]
    lo, hi = min(vals), max(vals)
    for s in a.segments:
        lo, hi = min(lo, s.mean - s.sd), max(hi, s.mean + s.sd)
    if hi - lo <= 0:
        lo, hi = lo - abs(lo) * 0.05 - 1e-12, hi + abs(hi) * 0.05 + 1e-12
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    n = len(pts)
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM

    def x(i: float) -> float:
        return LEFT + (plot_w * (i + 0.5) / n if n else 0)

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - lo) / (hi - lo))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" role="img">',
           f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="#fafafa" '
           'stroke="#ddd"/>']
    for v in (lo + pad, (lo + hi) / 2, hi - pad):
        out.append(f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" text-anchor="end">'
                   f'{html.escape(value(a, v))}</text>')
    step = plot_w / n if n else 0
    for s in a.segments:
        x0, x1 = x(s.start) - step / 2, x(s.end - 1) + step / 2
        out.append(f'<rect x="{x0:.1f}" y="{y(s.mean + s.sd):.1f}" width="{x1 - x0:.1f}" '
                   f'height="{max(y(s.mean - s.sd) - y(s.mean + s.sd), 0.5):.1f}" '
                   'fill="#4a78c2" fill-opacity="0.15"/>')
        out.append(f'<line x1="{x0:.1f}" x2="{x1:.1f}" y1="{y(s.mean):.1f}" '
                   f'y2="{y(s.mean):.1f}" stroke="#4a78c2" stroke-width="2"/>')
    for i, p in enumerate(pts):
        if p.run_id in annotations:
            xi = x(i) - step / 2
            out.append(f'<line x1="{xi:.1f}" x2="{xi:.1f}" y1="{TOP}" y2="{H - BOTTOM}" '
                       'stroke="#8a5a00" stroke-width="1.5"/><text x="'
                       f'{xi + 3:.1f}" y="{H - BOTTOM - 4}" fill="#8a5a00">'
                       f'{html.escape(annotations[p.run_id])}</text>')
    for f in a.changes:
        xi = x(f.at) - step / 2
        cls = f.verdict
        colour = "#b00020" if cls == "regression" else "#1b7f3b"
        label = f"{f.percent:+.1f}% p {p_text(f.change.pvalue)} {f.status}"
        out.append(f'<line x1="{xi:.1f}" x2="{xi:.1f}" y1="{TOP}" y2="{H - BOTTOM}" '
                   f'stroke="{colour}" stroke-dasharray="4 3"/><text x="{xi + 3:.1f}" '
                   f'y="{TOP + 11}" fill="{colour}">{html.escape(label)}</text>')
    for i, p in enumerate(pts):
        odd = a.transients.get(i) or (a.pending if a.pending and a.pending.index == i
                                      else None)
        why = f" (not analysed: {p.excluded or p.outcome})" if not p.analysed else \
            "" if odd is None else (f" ({'pending' if odd is a.pending else 'transient'}: "
                                    f"{100 * odd.deviation:+.1f}% from its level, left out "
                                    "of the levels)")
        attrs = ", ".join(f"{k} {v}" for k, v in p.attributes.items())
        tip = (f"run {p.run_id}, {p.session}, {when(p.started)}: {value(a, p.value)}"
               + (f", {attrs}" if attrs else "") + why)
        fill = "none" if not p.analysed else "#e08a00" if odd is not None else "#222"
        out.append(f'<a href="{html.escape(_link(link, p.path, p.session, p.run_id))}">'
                   f'<circle cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="3.2" fill="{fill}" '
                   f'stroke="#222"><title>{html.escape(tip)}</title></circle></a>')
    if pts:
        out.append(f'<text x="{LEFT}" y="{H - 8}">{html.escape(when(pts[0].started))}</text>')
        out.append(f'<text x="{W - RIGHT}" y="{H - 8}" text-anchor="end">'
                   f'{html.escape(when(pts[-1].started))}</text>')
    out.append("</svg>")
    return "\n".join(out)


def render_html(plan: str, series: Sequence[Analysed], catalog: Catalog, *,
                link: str | None = None) -> str:
    notes = {int(r[0]): f"env change{': ' + r[1] if r[1] else ''}" for r in catalog.rows(
        "SELECT run_id, reason FROM annotations WHERE kind = 'env-change' "
        "AND run_id IS NOT NULL")}
    rows = []
    label = series_labels(series)
    for a in series:
        cur = a.current
        last = a.changes[-1] if a.changes else None
        cls = f' class="{last.verdict}"' if last is not None else ""
        rows.append(f"<tr><td>{html.escape(label[a.series.id])}</td><td>{a.analysed_count}</td>"
                    f"<td>{html.escape(value(a, cur.mean)) if cur else '-'}</td>"
                    f"<td{cls}>{html.escape(verdict(a))}</td></tr>")
    figures = []
    for a in series:
        if not a.points:
            continue
        figures.append(f"<figure><figcaption>{html.escape(label[a.series.id])} "
                       f"({html.escape(a.series.info.label)})</figcaption>"
                       f"{_svg(a, link, notes)}</figure>")
    made = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>History of "
            f"{html.escape(plan)}</title><style>{_CSS}</style></head><body>"
            f"<h1>History of {html.escape(plan)}</h1><p>Catalog {html.escape(catalog.name)}"
            f", made {made}. Filled points are analysed; hollow ones were excluded or their "
            "step did not complete; orange ones are transients (one-off runs, left out of "
            "the levels, never gated). Lines: each level's mean, its band one standard "
            "deviation; dashed: change points.</p>"
            "<table><tr><th>series</th><th>runs</th><th>now</th><th>verdict</th></tr>"
            + "".join(rows) + "</table>" + "".join(figures) + "</body></html>\n")
