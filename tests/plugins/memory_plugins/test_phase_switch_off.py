"""Switching a memory phase off leaves prompts and memory.sqlite byte-identical to a runtime
that does not have the plugin at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.unframed_prompt import unframed

CONFIG_KEYS = {"memory_profile": "memoryProfile", "memory_notes": "memoryNotes",
               "memory_reflection": "memoryReflection"}
SCRIPTS: dict[str, tuple[list[str], str]] = {
    # the phase switched off -> (agent steps using only the other phases' tools, reflection answer)
    "memory_profile": ([calls(("memory.notes.store", {"content": "deploy with make deploy", "tags": ["ops"]})),
                        calls(("reply", {"text": "Stored."})), calls(("reply", {"text": "It is make deploy."}))],
                       "NOTE deploys use make [ops]"),
    "memory_notes": ([calls(("memory.profile.set", {"key": "city", "value": "Lisbon"})),
                      calls(("reply", {"text": "Saved."})), calls(("reply", {"text": "Lisbon."}))],
                     "SET language=Portuguese"),
    "memory_reflection": ([calls(("memory.profile.set", {"key": "city", "value": "Lisbon"}),
                                 ("memory.notes.store", {"content": "deploy with make deploy"})),
                           calls(("reply", {"text": "Saved."})), calls(("reply", {"text": "Lisbon, make deploy."}))],
                          "SET language=Portuguese"),
}
# what the last prompt shows when the other phases work (proof the comparison is not vacuous)
SHOWN = {"memory_profile": "### recalled\n#", "memory_notes": "- language: Portuguese",
         "memory_reflection": "### profile\n- city: Lisbon\n"}


async def run_two_turns(state: Path, workdir: Path, plugins: list[str], config: dict[str, Any],
                        script: list[str], reflect: str) -> tuple[list[str], bytes]:
    provider = RoutingProvider(list(script), reflect)
    runtime = make_memory_runtime(state, provider, plugins, config=config)
    first = await runtime.run_turn("remember: I live in Lisbon, speak Portuguese and deploy with make", working_dir=workdir)
    await runtime.close()  # waits for the reflection, closes memory.sqlite
    runtime = make_memory_runtime(state, provider, plugins, config=config)
    await runtime.run_turn("where do I live and how do I deploy?", session_id=first.session_id)
    await runtime.close()
    return [r.prompt for r in provider.requests], (state / "memory.sqlite").read_bytes()


@pytest.mark.parametrize("switched_off", ALL_MEMORY)
async def test_switched_off_phase_is_byte_identical_to_an_absent_plugin(
        tmp_path: Path, switched_off: str, frozen_clock: list[int], deterministic_session_ids: Any) -> None:
    script, reflect = SCRIPTS[switched_off]
    others = [p for p in ALL_MEMORY if p != switched_off]
    workdir = tmp_path / "work"
    workdir.mkdir()
    deterministic_session_ids()
    absent = await run_two_turns(tmp_path / "absent", workdir, others, {}, script, reflect)
    deterministic_session_ids()
    disabled = await run_two_turns(tmp_path / "disabled", workdir, list(ALL_MEMORY),
                                   {CONFIG_KEYS[switched_off]: {"enabled": False}}, script, reflect)
    assert absent[0] == disabled[0]  # every agent prompt, byte for byte
    assert absent[1] == disabled[1]  # the memory database file, byte for byte
    assert len(absent[0]) == 3 and SHOWN[switched_off] in unframed(absent[0][-1])
    deterministic_session_ids()
    enabled = await run_two_turns(tmp_path / "enabled", workdir, list(ALL_MEMORY), {}, script, reflect)
    assert enabled[0] != absent[0] or enabled[1] != absent[1]  # the switch does change something when on
