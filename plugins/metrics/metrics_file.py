"""`<state>/metrics.json`: the cumulative metrics of every runtime that closed in this state dir.

An in-process registry dies with its process, so the plugin adds its values into this file
when the runtime stops; `atomic-agent metrics` reads it. Writers take an exclusive lock on a sidecar
lock file so two closing processes never lose each other's counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_agent.api import write_atomic

from .metrics_registry import MetricsRegistry

METRICS_FILE = "metrics.json"
FORMAT_VERSION = 1


class MetricsFileError(RuntimeError):
    """metrics.json cannot be read; the message says how to recover."""


def metrics_path(state_dir: Path) -> Path:
    return state_dir / METRICS_FILE


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl

    with open(path.with_name(path.name + ".lock"), "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_metrics(state_dir: Path) -> dict[str, Any]:
    """The stored snapshot ({} shape when the file does not exist yet)."""
    path = metrics_path(state_dir)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"counters": [], "histograms": []}
    except (OSError, ValueError) as exc:
        raise MetricsFileError(f"{path} cannot be read ({exc}); delete it to start counting from zero") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("counters", []), list):
        raise MetricsFileError(f"{path} is not a metrics snapshot; delete it to start counting from zero")
    return {"counters": raw.get("counters", []), "histograms": raw.get("histograms", [])}


def flush_metrics(registry: MetricsRegistry, state_dir: Path) -> None:
    """Add what `registry` gained since its last flush into the stored totals (a second
    flush adds nothing new; the registry keeps its values for in-process readers)."""
    delta = registry.drain_delta()
    if not delta["counters"] and not delta["histograms"]:
        return
    path = metrics_path(state_dir)
    with _locked(path):
        merged = MetricsRegistry()
        try:
            merged.merge_snapshot(read_metrics(state_dir))
        except MetricsFileError:
            pass  # an unreadable file is replaced rather than blocking shutdown
        merged.merge_snapshot(delta)
        body = {"version": FORMAT_VERSION, **merged.snapshot()}
        write_atomic(path, json.dumps(body, indent=1) + "\n", mode=0o600)


def clear_metrics(state_dir: Path) -> None:
    path = metrics_path(state_dir)
    with _locked(path):
        path.unlink(missing_ok=True)
