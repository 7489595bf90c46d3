"""`MemoryPhase.turn_notices`: what a phase shows the person as a turn ends goes out as one
`turn_notice` event per text, after the reply and before `turn_finished`; a phase whose
notice raises is reported and the turn ends as it would have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.testing.scripted_provider import calls
from tests.agent.turn_notice_kit import NOTICE, NoticePlugin


async def test_a_phase_notice_is_emitted_between_the_reply_and_turn_finished(tmp_path: Path) -> None:
    plugin = NoticePlugin()
    rt = await runtime_for_test(tmp_path / "state", plugins={"notice": plugin},
                                provider=ScriptedProvider([calls(("reply", {"text": "hi"}))]))
    events: list[dict[str, Any]] = []
    try:
        result = await rt.run_turn("hello", on_event=events.append)
    finally:
        await rt.close()
    kinds = [e["type"] for e in events]
    assert kinds[-3:] == ["assistant_reply", "turn_notice", "turn_finished"]
    notice = events[-2]
    assert notice == {"type": "turn_notice", "sessionId": result.session_id, "turnIndex": result.turn_index,
                      "source": "t-notice", "text": NOTICE}
    assert plugin.seen == [(result.session_id, result.turn_index)]
    assert result.reply == "hi"  # the notice is not part of the reply (nor of the conversation the model sees)


async def test_a_raising_notice_is_reported_and_the_turn_still_ends_done(tmp_path: Path, capsys: Any) -> None:
    rt = await runtime_for_test(tmp_path / "state", plugins={"notice": NoticePlugin(fail=True)},
                                provider=ScriptedProvider([calls(("reply", {"text": "hi"}))]))
    events: list[dict[str, Any]] = []
    try:
        result = await rt.run_turn("hello", on_event=events.append)
    finally:
        await rt.close()
    assert result.status == "done" and "turn_notice" not in [e["type"] for e in events]
    assert "memory phase 't-notice' turn_notices failed: RuntimeError: notice broke" in capsys.readouterr().err
