"""Render a metrics snapshot in the Prometheus text exposition format (version 0.0.4)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

_INVALID = re.compile(r"[^a-zA-Z0-9_:]")


def prometheus_name(name: str) -> str:
    """`agent.memory.reflection` -> `agent_memory_reflection` (invalid characters become `_`)."""
    cleaned = _INVALID.sub("_", name)
    return cleaned if not cleaned[:1].isdigit() else "_" + cleaned


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(tags: Mapping[str, Any], extra: tuple[str, str] | None = None) -> str:
    pairs = [(prometheus_name(k), str(v)) for k, v in sorted(tags.items())]
    if extra is not None:
        pairs.append(extra)
    if not pairs:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in pairs) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def render_prometheus(snapshot: Mapping[str, Any]) -> str:
    """Counters become `<name>_total`, histograms `<name>_bucket/_sum/_count` (cumulative buckets)."""
    lines: list[str] = []
    typed: set[str] = set()
    for row in snapshot.get("counters", ()):
        metric = prometheus_name(row["name"]) + "_total"
        if metric not in typed:
            typed.add(metric)
            lines.append(f"# TYPE {metric} counter")
        lines.append(f"{metric}{_labels(row.get('tags') or {})} {_number(row['value'])}")
    for row in snapshot.get("histograms", ()):
        metric = prometheus_name(row["name"])
        if metric not in typed:
            typed.add(metric)
            lines.append(f"# TYPE {metric} histogram")
        tags = row.get("tags") or {}
        running = 0
        for bound, n in zip([*row["bounds"], math.inf], row["counts"], strict=True):
            running += n
            lines.append(f"{metric}_bucket{_labels(tags, ('le', _number(float(bound))))} {running}")
        lines.append(f"{metric}_sum{_labels(tags)} {_number(row['sum'])}")
        lines.append(f"{metric}_count{_labels(tags)} {row['count']}")
    return "\n".join(lines) + ("\n" if lines else "")
