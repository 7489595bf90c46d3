"""Which memory phases are on or off, read from the loaded config blocks: what `memory
phases`, serve's GET /api/memory/phases and the sidecar's `memory_phases` show.

Each memory plugin declares its switches on its own config classes (`phase_label`,
`phase_rank`, `phase_settings` class attributes), so this module names no sibling plugin:
a phase whose plugin is not loaded has no structured block and is simply not listed.
"""

from __future__ import annotations

from typing import Any


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def phase_switches(blocks: Any) -> list[dict[str, Any]]:
    """One row per declared memory phase, in the order the phases declare (`phase_rank`):
    on or off, and the settings it names under their on-disk (camelCase) names."""
    declared = []
    for key, block in blocks.items():
        label = getattr(type(block), "phase_label", None)
        if isinstance(label, str) and hasattr(block, "enabled"):  # a raw dict (no plugin owns it) has no label
            declared.append((int(type(block).phase_rank), key, label, block))
    rows = []
    for _, key, label, block in sorted(declared, key=lambda row: (row[0], row[1])):
        settings = {_camel(name): getattr(block, name) for name in type(block).phase_settings if hasattr(block, name)}
        rows.append({"phase": label, "block": key, "state": "on" if block.enabled else "off", "settings": settings})
    return rows
