"""Which memory phases are on, off or not installed, read from the loaded config blocks:
what `memory phases`, serve's GET /api/memory/phases and the sidecar's `memory_phases` show."""

from __future__ import annotations

from typing import Any

# the memory phases' switches, by config block: (phase, block, detail keys shown beside `enabled`)
PHASE_SWITCHES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("profile", "memoryProfile", ()),
    ("notes", "memoryNotes", ()),
    ("reflection", "memoryReflection", ()),
    ("embeddings (v2 phase 1B)", "memoryEmbeddings", ("fts5_weight", "vector_weight", "candidates")),
    ("links (v2 phase 2)", "memoryLinks", ("auto_generate", "expansion_depth", "max_expanded")),
    ("evolver (v2 phase 3)", "memoryEvolution", ("max_per_write", "lease_ms")),
    ("rewriter (v2.5 A)", "memoryRewriter", ("gate_mode", "timeout_ms", "history_turns")),
    ("segmentation (v2.5 B)", "memorySegmentation", ("trigger_every_turns", "window_turns")),
    ("typed notes (v2.5 C)", "memoryTypedNotes", ()),
)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def phase_switches(blocks: Any) -> list[dict[str, Any]]:
    """One row per memory phase: on, off, or not installed (its plugin is not loaded); the
    settings under their on-disk (camelCase) names."""
    rows = []
    for phase, key, details in PHASE_SWITCHES:
        block = blocks.get(key)
        if block is None or isinstance(block, dict):  # no plugin owns the block: kept verbatim, unused
            rows.append({"phase": phase, "block": key, "state": "not installed", "settings": {}})
            continue
        settings = {_camel(name): getattr(block, name) for name in details if hasattr(block, name)}
        rows.append({"phase": phase, "block": key, "state": "on" if block.enabled else "off", "settings": settings})
    return rows
