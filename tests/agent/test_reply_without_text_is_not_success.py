"""`[{"tool":"reply","args":{}}]` ended the turn with rc 0 and an empty
answer. A terminal call whose args break its schema is a model failure: it goes through
the parse-retry path (one re-ask), and if the second answer is no better the turn fails
as a grammar failure — never a silent success."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.transcript_entry import REPLY
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime

BAD_TERMINALS = [
    '[{"tool": "reply", "args": {}}]',
    '[{"tool": "reply", "args": {"text": 42}}]',
    '[{"tool": "reply", "args": {"text": "   "}}]',
    '[{"tool": "finish", "args": {}}]',
    '[{"tool": "t.read", "args": {"path": "a"}}, {"tool": "reply", "args": {}}]',
]


async def _turn(tmp_path: Path, script: list[str]) -> tuple[object, list[str], list[dict]]:
    provider = ScriptedProvider(script)
    runtime = make_runtime(tmp_path, provider)
    events: list[dict] = []
    try:
        result = await runtime.run_turn("hello", on_event=events.append)
        replies = [e.text for e in runtime.sessions.entries(result.session_id) if e.kind == REPLY]
    finally:
        await runtime.close()
    return result, replies, events


@pytest.mark.parametrize("bad", BAD_TERMINALS)
async def test_a_terminal_with_bad_args_is_re_asked_once(tmp_path: Path, bad: str) -> None:
    result, replies, events = await _turn(tmp_path, [bad, calls(("reply", {"text": "a real answer"}))])
    assert [e["type"] for e in events].count("parse_retry") == 1
    assert result.status == "done" and result.reply == "a real answer"
    assert replies == ["a real answer"]


@pytest.mark.parametrize("bad", BAD_TERMINALS)
async def test_a_terminal_with_bad_args_twice_fails_the_turn(tmp_path: Path, bad: str) -> None:
    result, replies, _ = await _turn(tmp_path, [bad, bad])
    assert (result.status, result.category) == ("failed", "grammar"), result
    assert result.reply == "" and replies == []
