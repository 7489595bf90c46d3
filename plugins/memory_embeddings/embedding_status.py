"""What `memory embeddings`, doctor and the hosts show about hybrid recall, read-only:
the switch, how many notes have a vector of which model, the index, the last failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .hybrid_memory import read_status
from .vector_index import vectors_path


def embedding_counts(state_dir: Path) -> dict[str, Any]:
    """Notes and vectors per model in memory.sqlite (read-only; {} when there is no file)."""
    from atomic_agent.api import open_sqlite_read_only

    path = Path(state_dir) / "memory.sqlite"
    if not path.exists():
        return {"notes": 0, "byModel": {}}
    conn = open_sqlite_read_only(path)
    try:
        notes = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        by_model: dict[str, int] = {}
        if "memory_embeddings" in tables:
            by_model = {str(m): int(n) for m, n in
                        conn.execute("SELECT model, count(*) FROM memory_embeddings GROUP BY model ORDER BY model")}
        return {"notes": notes, "byModel": by_model}
    except Exception as exc:
        return {"notes": None, "byModel": {}, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        conn.close()


def embedding_status(state_dir: Path, enabled: bool) -> dict[str, Any]:
    status = read_status(state_dir)
    counts = embedding_counts(state_dir)
    model = status.get("model")
    embedded = counts["byModel"].get(model, 0) if model else 0
    notes = counts.get("notes") or 0
    return {"enabled": enabled, "model": model, "dim": status.get("dim"), "notes": counts.get("notes"),
            "embedded": embedded, "pending": max(notes - embedded, 0) if model else notes,
            "coverage": round(embedded / notes, 4) if notes else None,
            "byModel": counts["byModel"], "index": str(vectors_path(state_dir)),
            "indexExists": vectors_path(state_dir).exists(), "fallbacks": int(status.get("fallbacks", 0)),
            "lastFailure": status.get("lastFailure"), "lastOk": status.get("lastOk")}


class EmbeddingStatusView:
    """The `memory_embedding_status` service: `embedding_status` for a running host (serve,
    sidecar), on or off; it reads only, so building it starts and creates nothing."""

    def __init__(self, state_dir: Path, enabled: bool) -> None:
        self.state_dir = state_dir
        self.enabled = enabled

    def status(self) -> dict[str, Any]:
        return embedding_status(self.state_dir, self.enabled)
