"""A one-shot CLI turn re-sends nothing: a steer it handed back is shown and dismissed, so it
never comes back later as a turn nobody asked for."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from atomic_agent.plugins.chat_cli.turn_runner import run_one_turn
from tests.agent.loop_harness import make_runtime
from tests.turns.test_steer_hand_back import steering_late


async def test_the_cli_shows_and_dismisses_a_handed_back_steer(tmp_path: Path, capsys: Any):
    holder: dict[str, Any] = {}
    rt = make_runtime(tmp_path, steering_late(holder, "too late"))
    sid = rt.open_session(None, tmp_path).id
    holder.update(rt=rt, sid=sid)
    result = await run_one_turn(rt, "late start", sid, lambda event: None, tmp_path)
    assert result.undelivered == ("too late",)
    assert "not used: too late" in capsys.readouterr().err
    with sqlite3.connect(rt.sessions.path) as other:
        assert other.execute("select count(*) from steer_queue").fetchone()[0] == 0
    await rt.close()
