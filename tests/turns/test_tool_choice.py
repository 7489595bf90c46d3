"""`tool_choice` forces step 0 to call one tool: only that name is in step 0's grammar,
later steps get the normal grammar back, and an unknown name is refused before admission."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.turn_execution import UnknownToolChoiceError
from tests.agent.loop_harness import make_runtime


async def test_tool_choice_narrows_only_the_first_steps_grammar(tmp_path: Path) -> None:
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("read a", working_dir=tmp_path, tool_choice="t.read")
    await rt.close()
    assert result.status == "done"
    first, second = provider.requests[0].grammar, provider.requests[1].grammar
    assert first.splitlines()[-1] == 'step-tool-name ::= "\\"t.read\\""' and "final-call" not in first
    assert '"\\"reply\\""' in second and '"\\"t.store\\""' in second.splitlines()[-1]


async def test_unknown_tool_choice_is_refused_before_anything_is_admitted(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, ScriptedProvider([]))
    session = rt.open_session(None, tmp_path)
    with pytest.raises(UnknownToolChoiceError, match="tools list"):
        await rt.run_turn("x", session_id=session.id, tool_choice="no.such.tool")
    assert rt.sessions.load(session.id).entries == []
    await rt.close()


async def test_a_forced_tool_that_must_run_alone_admits_exactly_one_call(tmp_path: Path) -> None:
    provider = ScriptedProvider([calls(("t.gated", {"path": "a"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, ask=lambda *_a, **_k: True)
    await rt.run_turn("do it", working_dir=tmp_path, tool_choice="t.gated")
    free = make_runtime(tmp_path / "free", ScriptedProvider([calls(("t.read", {"path": "a"})),
                                                              calls(("reply", {"text": "ok"}))]))
    await free.run_turn("read a", working_dir=tmp_path, tool_choice="t.read")
    await rt.close()
    await free.close()
    gated = provider.requests[0].grammar.splitlines()
    assert "batch ::= lone-call" in gated  # an approval-gated tool runs alone: a batch of it would be refused
    assert not any(r.startswith("step-calls ::=") for r in gated)
    read_rule = next(r for r in free.provider.requests[0].grammar.splitlines() if r.startswith("step-calls ::="))
    assert not read_rule.endswith("){0,0}")  # a pure read may still be batched
