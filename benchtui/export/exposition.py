"""The collector's families as text: the Prometheus format (0.0.4) or OpenMetrics 1.0.

prometheus_client can render any collector, but it validates and escapes every label of every
sample on every scrape: 16 hosts (6,300 series) took ~85-97 ms that way against ~22 ms here
(docs/benchmarks/export.md). The collector keeps each series' label text once made, so
rendering here is one string per sample. ``collect()`` still hands the same
families to prometheus_client as ``Metric`` objects, and the tests check that both renderings
say the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client.core import Metric

from benchtui.export.metric_names import format_value

Labels = Mapping[str, str]


def escape_label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def label_text(labels: Labels) -> str:
    """``{k="v",...}`` (empty for no labels), values escaped."""
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{escape_label_value(v)}"' for k, v in labels.items()) + "}"


@dataclass(slots=True)
class Family:
    """One metric family of a scrape. ``name`` is without ``_total`` for counters (as
    OpenMetrics names them); samples are (sample name, labels, label text, value)."""

    name: str
    type: str
    unit: str
    help: str
    samples: list[tuple[str, Labels, str, float]] = field(default_factory=list)

    def add(self, name: str, labels: Labels, value: float, text: str | None = None) -> None:
        self.samples.append((name, labels, label_text(labels) if text is None else text,
                             value))

    def to_metric(self) -> Metric:
        """The family as a prometheus_client ``Metric`` (for registries, generate_latest)."""
        metric = Metric(self.name, self.help, self.type, self.unit)
        for name, labels, _text, value in self.samples:
            metric.add_sample(name, dict(labels), value)
        return metric


def _help(text: str, *, openmetrics: bool) -> str:
    text = text.replace("\\", "\\\\").replace("\n", "\\n")
    return text.replace('"', '\\"') if openmetrics else text


def render(families: Iterable[Family], *, openmetrics: bool = False) -> bytes:
    """The exposition of ``families``: Prometheus text 0.0.4, or OpenMetrics 1.0 with
    ``# UNIT`` lines and the closing ``# EOF``."""
    out: list[str] = []
    for family in families:
        name = family.name
        shown = name if openmetrics or family.type != "counter" else name + "_total"
        out.append(f"# HELP {shown} {_help(family.help, openmetrics=openmetrics)}\n")
        out.append(f"# TYPE {shown} {family.type}\n")
        if openmetrics and family.unit:
            out.append(f"# UNIT {name} {family.unit}\n")
        out.extend(f"{sample}{text} {format_value(value)}\n"
                   for sample, _labels, text, value in family.samples)
    if openmetrics:
        out.append("# EOF\n")
    return "".join(out).encode()
