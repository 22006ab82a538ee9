"""A report page as real Chromium lays it out, measured at several widths in one browser
start (tests of the HTML report).

``measure(page, widths)`` puts the page in an iframe per width (``srcdoc``: the frames
share the wrapper's origin, so its script can read them), has headless Chromium load the
wrapper (``--virtual-time-budget``: it lays everything out and runs the script before it
dumps the DOM), and returns per width what the script found:

- ``broken``: table headers and headings with a line break inside a word (a break
  between two characters neither of which is a space);
- ``small``: texts under 10 px as drawn: HTML text, and SVG text at its size on screen
  (its font size times the scale the SVG is drawn at);
- ``cut``: SVG texts not inside their SVG (a title or legend wider than its figure);
- ``off``: data points (the markers of a plot's lines: ``line-N``, ``partial-N``,
  ``baseline-N`` groups) whose centre is outside their axes;
- ``over``: tables whose right edge is past the page's (read without scrolling);
- ``scroll``, ``client``: the page's scroll width and width (the page scrolls sideways
  when the first is larger); ``smallest``: the smallest text size found.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
#: The flags a headless run needs here (docs: no network, no sandbox as root, a profile
#: of its own).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")

_MEASURE = """
function measure(doc, win) {
  const out = {broken: [], small: [], cut: [], off: [], over: 0, smallest: 1e9};
  const broken = (el) => {
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let lastTop = null, prev = " ";
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent;
      for (let i = 0; i < text.length; i++) {
        const range = doc.createRange();
        range.setStart(node, i); range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect) continue;
        if (lastTop !== null && rect.top > lastTop + 2 && !/\\s/.test(prev)
            && !/\\s/.test(text[i])) {
          out.broken.push(el.textContent.trim());
          return;
        }
        lastTop = rect.top; prev = text[i];
      }
    }
  };
  doc.querySelectorAll("th, h1, h2, h3").forEach(broken);
  const small = (px, text) => {
    out.smallest = Math.min(out.smallest, px);
    if (px < 10) out.small.push([Math.round(px * 10) / 10, text.trim().slice(0, 50)]);
  };
  const walker = doc.createTreeWalker(doc.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || el.closest("svg, style, script")) continue;
    small(parseFloat(win.getComputedStyle(el).fontSize), node.textContent);
  }
  doc.querySelectorAll("svg text").forEach((t) => {
    if (!t.textContent.trim()) return;
    const m = t.getScreenCTM();
    small(parseFloat(win.getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b), t.textContent);
    const box = t.ownerSVGElement.getBoundingClientRect(), r = t.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5
        || r.bottom > box.bottom + 0.5) out.cut.push(t.textContent.trim().slice(0, 60));
  });
  doc.querySelectorAll("svg g[id*='axes_']").forEach((axes) => {
    const patch = axes.querySelector("g[id*='patch_'] path");
    if (!patch) return;
    const box = patch.getBoundingClientRect();
    const points = axes.querySelectorAll(
      "g[id*='-line-'] use, g[id*='-partial-'] use, g[id*='-baseline-'] use");
    points.forEach((u) => {
      const r = u.getBoundingClientRect(), x = (r.left + r.right) / 2,
            y = (r.top + r.bottom) / 2;
      if (x < box.left - 1 || x > box.right + 1 || y < box.top - 1 || y > box.bottom + 1)
        out.off.push(axes.id);
    });
  });
  const page = doc.documentElement;
  out.over = [...doc.querySelectorAll("table")].filter(
    (t) => t.getBoundingClientRect().right > page.clientWidth + 0.5).length;
  out.scroll = page.scrollWidth;
  out.client = page.clientWidth;
  return out;
}
window.addEventListener("load", () => {
  const found = {};
  document.querySelectorAll("iframe").forEach((frame) => {
    found[frame.width] = measure(frame.contentDocument, frame.contentWindow);
  });
  document.body.setAttribute("data-measure", JSON.stringify(found));
});
"""


def measure(page: Path, widths: tuple[int, ...], *, height: int = 1000,
            timeout: float = 180.0) -> dict[int, dict[str, Any]]:
    """What the script found in ``page`` laid out at each of ``widths`` (module doc)."""
    source = html.escape(page.read_text(encoding="utf-8"), quote=True)
    frames = "".join(f'<iframe width="{w}" height="{height}" srcdoc="{source}"></iframe>'
                     for w in widths)
    with tempfile.TemporaryDirectory(prefix="benchtui-chromium-") as work:
        wrapper = Path(work) / "measure.html"
        wrapper.write_text(f"<!DOCTYPE html><html><body style='margin:0'>{frames}"
                           f"<script>{_MEASURE}</script></body></html>", encoding="utf-8")
        done = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={work}/profile",
             f"--window-size={max(widths) + 40},{height}", "--virtual-time-budget=20000",
             "--dump-dom", wrapper.as_uri()],
            capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise AssertionError(f"chromium failed: {done.stderr[-2000:]}")
    found = re.search(r'data-measure="([^"]*)"', done.stdout)
    if found is None:
        raise AssertionError(f"the page was not measured: {done.stdout[-2000:]}")
    return {int(w): r for w, r in json.loads(html.unescape(found.group(1))).items()}
