"""Every memory v2 phase switched off leaves every prompt (agent steps and sub-calls, with
their grammars and slots) and memory.sqlite byte-identical to a runtime without its plugin;
switched on, the same conversation differs (so the comparison is not vacuous)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY
from tests.plugins.memory_plugins.v2_scenario import run_scenario

# plugin -> (its config block, the plugins it is compared against)
PHASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "memory_links": ("memoryLinks", ALL_MEMORY),
    "memory_evolver": ("memoryEvolution", (*ALL_MEMORY, "memory_links")),
    "memory_rewriter": ("memoryRewriter", ALL_MEMORY),
    "memory_segmentation": ("memorySegmentation", ALL_MEMORY),
    "memory_typed_notes": ("memoryTypedNotes", ALL_MEMORY),
}


@pytest.mark.parametrize("plugin", sorted(PHASES))
async def test_switched_off_v2_phase_is_byte_identical_to_an_absent_plugin(
        tmp_path: Path, plugin: str, frozen_clock: list[int], deterministic_session_ids: Any) -> None:
    block, base = PHASES[plugin]
    work = tmp_path / "work"
    work.mkdir()
    deterministic_session_ids()
    absent = await run_scenario(tmp_path / "absent", work, base, {})
    deterministic_session_ids()
    off = await run_scenario(tmp_path / "off", work, [*base, plugin], {block: {"enabled": False}})
    deterministic_session_ids()
    on = await run_scenario(tmp_path / "on", work, [*base, plugin], {block: {"enabled": True}})
    assert absent[0] == off[0]  # every prompt, grammar and slot, byte for byte
    assert absent[1] == off[1]  # the memory database file, byte for byte
    assert on[0] != off[0] or on[1] != off[1]  # the phase really acts on this conversation
