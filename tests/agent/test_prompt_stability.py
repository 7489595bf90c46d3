"""Stable prefix byte-identical across steps; tail order; grammar, slot and cache_prompt on every request."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.hook_records import MemoryPhase, PromptSection
from atomic_agent.hookspecs import hookimpl
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime


def prefix_hashes(rt, session_id: str) -> list[str]:
    lines = (rt.state_dir / "traces" / f"{session_id}.ndjson").read_text().splitlines()
    return [e["stablePrefixHash"] for e in map(json.loads, lines) if e["type"] == "prompt_captured"]


async def test_stable_prefix_is_byte_identical_on_every_step(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("tool.view", {"name": "t.rare"})),
                                 calls(("t.read", {"path": "b"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    plan = await rt.prompt_plan()
    framed = plan.profile.frame_stable_prefix(plan.stable_prefix_for(tmp_path))
    assert all(r.prompt.startswith(framed) for r in provider.requests)
    assert len(set(prefix_hashes(rt, result.session_id))) == 1
    await rt.close()


async def test_every_request_carries_grammar_slot_and_cache_prompt(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))], slot=1)
    rt = make_runtime(tmp_path, provider)
    await rt.run_turn("go", working_dir=tmp_path)
    for request in provider.requests:
        assert request.grammar and "tool-call-array" in request.grammar
        assert request.slot_id == 1 and request.cache_prompt is True
    await rt.close()


async def test_rare_tool_listed_one_line_and_loaded_into_the_tail_not_the_prefix(tmp_path: Path):
    provider = ScriptedProvider([calls(("tool.view", {"name": "t.rare"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    first, second = provider.requests[0].prompt, provider.requests[1].prompt
    extras = first.split("# extras (tier rare; tool.view first)\n", 1)[1].split("###", 1)[0]
    assert "t.rare\n" in extras and "t.rare(path: string, n: integer)" not in first  # listed by name only
    tail = second.split("### loaded-tools", 1)
    assert len(tail) == 2 and "t.rare(path: string, n: integer)" in tail[1]
    assert rt.sessions.load(result.session_id).loaded_tools == ["t.rare"]
    await rt.close()


async def test_invalid_args_on_a_rare_tool_auto_expands_its_schema(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.rare", {"path": "x"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert rt.sessions.load(result.session_id).loaded_tools == ["t.rare"]
    assert "### loaded-tools" in provider.requests[1].prompt
    await rt.close()


async def test_loaded_tools_are_lru_capped(tmp_path: Path):
    from atomic_agent.sessions.session_state import SessionState

    state = SessionState(id="s", working_dir=tmp_path, created_at="")
    for name in ["a", "b", "c", "a", "d"]:
        state.load_tool(name, cap=3)
    assert state.loaded_tools == ["c", "a", "d"]


class SectionPhase:
    @hookimpl
    def register_memory_phases(self, runtime):
        return [MemoryPhase(name="test-phase", sections=lambda sid, text: [
            PromptSection("profile", f"- name: Ada (asked: {text})"),
            PromptSection("recalled", "- #1 a note", slot="recall")])]


async def test_memory_phase_sections_render_in_the_tail_in_mutability_order(tmp_path: Path):
    provider = ScriptedProvider([calls(("tool.view", {"name": "t.rare"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, extra=[(SectionPhase(), "test_phase")])
    await rt.run_turn("who am i", working_dir=tmp_path)
    prompt = provider.requests[1].prompt
    plan = await rt.prompt_plan()
    assert "### profile" not in plan.stable_prefix_for(tmp_path)
    order = ["### instructions", "### loaded-tools", "### profile", "### recalled", "### world", "### conversation",
             "### respond"]
    positions = [prompt.index(h) for h in order]
    assert positions == sorted(positions)
    assert "asked: who am i" in prompt
    await rt.close()


async def test_memory_phase_absent_leaves_the_prompt_byte_identical(tmp_path: Path):
    script = [calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))]
    a, b = ScriptedProvider(list(script)), ScriptedProvider(list(script))

    class EmptyPhase:
        @hookimpl
        def register_memory_phases(self, runtime):
            return [MemoryPhase(name="empty", sections=lambda sid, text: [])]

    rt_a = make_runtime(tmp_path / "a", a)
    rt_b = make_runtime(tmp_path / "b", b, extra=[(EmptyPhase(), "empty")])
    await rt_a.run_turn("go", working_dir=tmp_path)
    await rt_b.run_turn("go", working_dir=tmp_path)
    assert [r.prompt for r in a.requests] == [r.prompt for r in b.requests]
    await rt_a.close()
    await rt_b.close()


async def test_notice_section_carries_loop_warnings(tmp_path: Path):
    same = calls(("t.read", {"path": "a"}))
    provider = ScriptedProvider([same] * 5, default=calls(("reply", {"text": "ok"})))
    rt = make_runtime(tmp_path, provider)
    await rt.run_turn("go", working_dir=tmp_path)
    noticed = [r.prompt for r in provider.requests if "### notice" in r.prompt]
    assert noticed and noticed[0].index("### notice") > noticed[0].index("### conversation")
    await rt.close()
