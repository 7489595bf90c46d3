"""A plugin's end-of-turn notice (the worktree diffstat's shape) reaches a sidecar host as a
schema-valid `turn_notice` event between `assistant_reply` and `turn_finished`."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.turn_notice_kit import NOTICE, NoticePlugin
from tests.plugins.sidecar.sidecar_harness import SidecarHarness


async def test_a_turn_notice_is_forwarded_after_the_reply_and_before_turn_finished(tmp_path: Path) -> None:
    sidecar = SidecarHarness(tmp_path, ScriptedProvider([calls(("reply", {"text": "edited"}))]),
                             extra=[(NoticePlugin(), "notice")])
    turn = await sidecar.ok("send_message", text="edit")
    events = await sidecar.turn_done(turn["turnId"])
    kinds = [e["type"] for e in events]
    assert kinds.index("assistant_reply") < kinds.index("turn_notice") < kinds.index("turn_finished")
    [notice] = [e for e in events if e["type"] == "turn_notice"]
    assert notice["text"] == NOTICE and notice["source"] == "t-notice" and notice["sessionId"] == turn["sessionId"]
    await sidecar.close()  # every message written was valid against the published schema
