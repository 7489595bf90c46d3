"""Cross-session memory: what session 1 learned (by tool and by reflection) shows in session 2."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.unframed_prompt import unframed


def hashes(state: Path, session_id: str) -> set[str]:
    lines = (state / "traces" / f"{session_id}.ndjson").read_text().splitlines()
    return {e["stablePrefixHash"] for e in map(json.loads, lines) if "stablePrefixHash" in e}


async def test_fact_by_tool_and_by_reflection_and_a_note_reach_the_next_session(tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    session_one = RoutingProvider(
        [calls(("memory.profile.set", {"key": "name", "value": "Alex"}),
               ("memory.notes.store", {"content": "The staging database listens on port 5433", "tags": ["staging"]})),
         calls(("reply", {"text": "Got it, Alex."}))],
        "SET preferred_language=English")
    runtime = make_memory_runtime(state, session_one)
    first = await runtime.run_turn("I'm Alex; staging db is on 5433. I write in English.", working_dir=work)
    await settle(runtime)
    await runtime.close()

    session_two = RoutingProvider([calls(("reply", {"text": "Port 5433."}))], "NONE")
    runtime = make_memory_runtime(state, session_two)
    second = await runtime.run_turn("which port does the staging database use?", working_dir=work)
    await runtime.close()

    assert first.session_id != second.session_id
    prompt = unframed(session_two.requests[0].prompt)
    assert "### profile\n- name: Alex\n- preferred_language: English\n" in prompt
    assert "### recalled\n#1 [staging] The staging database listens on port 5433" in prompt
    assert prompt.index("### profile") < prompt.index("### recalled") < prompt.index("### conversation")
    # the memory writes changed the tail only: one stable-prefix hash across both sessions
    assert hashes(state, first.session_id) == hashes(state, second.session_id)
    assert len(hashes(state, first.session_id)) == 1
    assert "### profile" not in session_one.requests[0].prompt  # nothing was remembered before session 1
