"""Plugin names that no longer exist, and what a user who wrote one in `plugins.disabled`
should write instead (for `atomic-agent doctor`).

A renamed plugin (FORMER_NAMES) is still matched by its old name, so the line works but
reads as if it named something else. A folded plugin became a switch inside another plugin:
its old name in `plugins.disabled` now matches nothing, and what it switched stays on.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:  # the plugin host reads FORMER_NAMES at every start; the doctor's records load with the doctor
    from atomic_agent.hook_records import DoctorFinding

# built-in plugins that were renamed: the old name in plugins.disabled or the allow-list still
# means the plugin (a user who switched `http` off keeps `serve` off); new name -> old name
FORMER_NAMES = {"serve": "http"}


@attrs.frozen
class FoldedPlugin:
    into: str  # the plugin that now holds its behaviour
    switch: str  # the config field that turns that behaviour off


FOLDED = {
    "memory_evolver": FoldedPlugin("memory_links", "memoryEvolution.enabled"),
    "memory_typed_notes": FoldedPlugin("memory_reflection", "memoryTypedNotes.enabled"),
    "memory_segmentation": FoldedPlugin("memory_reflection", "memorySegmentation.enabled"),
}


def retired_name_problems(disabled: Iterable[object]) -> list[tuple[str, str, str]]:
    """(name, what became of it, what to write instead) for each retired name in `disabled`."""
    renamed = {old: new for new, old in FORMER_NAMES.items()}
    problems = []
    for name in disabled:
        if not isinstance(name, str):
            continue
        if name in renamed:
            new = renamed[name]
            problems.append((name, f"the {name!r} plugin is now called {new!r} (the old name still disables it)",
                             f"write {new!r} instead of {name!r} in plugins.disabled"))
        elif name in FOLDED:
            folded = FOLDED[name]
            problems.append((name, f"{name!r} is no longer a plugin: it was folded into {folded.into!r}, so this "
                                   "entry disables nothing and the behaviour stays on",
                             f"remove {name!r} from plugins.disabled and set {folded.switch} to false in "
                             "config.json to switch it off"))
    return problems


def retired_name_findings(state_dir: Path) -> list[DoctorFinding]:
    from atomic_agent.config.raw_config import read_raw_config
    from atomic_agent.hook_records import DoctorFinding

    path = state_dir / "config.json"
    try:
        raw = read_raw_config(path)
    except Exception:  # noqa: BLE001 - a broken config is the core config check's finding
        return []
    block = raw.get("plugins")
    disabled = block.get("disabled") if isinstance(block, dict) else None
    if not isinstance(disabled, list):
        return []
    return [DoctorFinding("plugins.disabled", "warn", f"{name!r}: {became}", advice, str(path))
            for name, became, advice in retired_name_problems(disabled)]
