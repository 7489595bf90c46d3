"""Every memory v2 phase switched off leaves every prompt (agent steps and sub-calls, with
their grammars and slots) and memory.sqlite byte-identical to a runtime without it; switched
on, the same conversation differs (so the comparison is not vacuous).

A phase with a plugin of its own is compared against a runtime without that plugin. A switch
that lives inside another plugin's code (the evolver in memory_links; segmentation and typed
notes in memory_reflection) is compared against that plugin with the switch's code path cut
out (`ABSENT`), which is what a runtime without the old flag plugin ran."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.memory_links.link_generator import LinkGenerator
from atomic_agent.plugins.memory_reflection.reflection_runner import ReflectionRunner
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY
from tests.plugins.memory_plugins.v2_scenario import run_scenario


def _no_evolver(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LinkGenerator, "evolver", lambda self: None)


def _reflection_without(block: str) -> Callable[[pytest.MonkeyPatch], None]:
    def cut(monkeypatch: pytest.MonkeyPatch) -> None:
        switch = ReflectionRunner._switch
        monkeypatch.setattr(ReflectionRunner, "_switch",
                            lambda self, key: None if key == block else switch(self, key))

    return cut


# phase -> (its config block, the plugins it is compared against, the plugin it adds or None
# when the switch is part of a base plugin)
PHASES: dict[str, tuple[str, tuple[str, ...], str | None]] = {
    "links": ("memoryLinks", ALL_MEMORY, "memory_links"),
    "evolver": ("memoryEvolution", (*ALL_MEMORY, "memory_links"), None),
    "rewriter": ("memoryRewriter", ALL_MEMORY, "memory_rewriter"),
    "segmentation": ("memorySegmentation", ALL_MEMORY, None),
    "typed_notes": ("memoryTypedNotes", ALL_MEMORY, None),
}
# a folded switch's code path cut out of its host plugin: the runtime before the switch existed
ABSENT: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "evolver": _no_evolver,
    "segmentation": _reflection_without("memorySegmentation"),
    "typed_notes": _reflection_without("memoryTypedNotes"),
}


@pytest.mark.parametrize("phase", sorted(PHASES))
async def test_switched_off_v2_phase_is_byte_identical_to_an_absent_phase(
        tmp_path: Path, phase: str, frozen_clock: list[int], deterministic_session_ids: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    block, base, plugin = PHASES[phase]
    with_phase = [*base, plugin] if plugin else list(base)
    work = tmp_path / "work"
    work.mkdir()
    deterministic_session_ids()
    with monkeypatch.context() as patch:
        if plugin is None:
            ABSENT[phase](patch)
        absent = await run_scenario(tmp_path / "absent", work, base, {block: {"enabled": True}} if plugin is None else {})
    deterministic_session_ids()
    off = await run_scenario(tmp_path / "off", work, with_phase, {block: {"enabled": False}})
    deterministic_session_ids()
    on = await run_scenario(tmp_path / "on", work, with_phase, {block: {"enabled": True}})
    assert absent[0] == off[0]  # every prompt, grammar and slot, byte for byte
    assert absent[1] == off[1]  # the memory database file, byte for byte
    assert on[0] != off[0] or on[1] != off[1]  # the phase really acts on this conversation
