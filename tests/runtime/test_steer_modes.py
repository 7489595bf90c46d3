"""agent.steerMode: `one-at-a-time` (default) folds the oldest waiting steer into a step and
answers it before the next one joins; `all` folds every waiting steer into one step. Either
way each steer is a real user row exactly once, in acceptance order, and none is handed back
when the turn could still answer it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_file import load_config
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.steering_inbox import SteerOutcome
from tests.agent.loop_harness import ToolLog, make_runtime


def _configure(tmp_path: Path, mode: str | None) -> None:
    (tmp_path / "state").mkdir(exist_ok=True)
    agent = {} if mode is None else {"steerMode": mode}
    (tmp_path / "state" / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "agent": agent}))


async def _steer_twice_during_first_step(tmp_path: Path, mode: str | None) -> tuple[list[dict], list, object]:
    _configure(tmp_path, mode)
    replies = iter(["one", "two", "three"])
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}))]
                                + [lambda _req: calls(("reply", {"text": next(replies)}))] * 3)
    log = ToolLog()
    release = log.hold("a")
    rt = make_runtime(tmp_path, provider, log)
    sid = rt.open_session(None, tmp_path).id
    events: list[dict] = []
    task = asyncio.ensure_future(rt.run_turn("start", session_id=sid, on_event=events.append))
    await log.running("a")  # the first step's tool is running
    assert rt.steer(sid, "first correction") is SteerOutcome.ACCEPTED
    assert rt.steer(sid, "second correction") is SteerOutcome.ACCEPTED
    release.set()
    result = await task
    entries = rt.sessions.load(sid).entries
    await rt.close()
    return events, entries, result


async def test_one_at_a_time_is_the_default_and_answers_each_steer_before_the_next(tmp_path: Path):
    events, entries, result = await _steer_twice_during_first_step(tmp_path, None)
    applied = [(e["text"], e["stepIndex"]) for e in events if e["type"] == "steer_applied"]
    assert applied == [("first correction", 1), ("second correction", 2)]
    # each steer gets its own answer: user, reply, user, reply
    rows = [(e.kind, e.text) for e in entries if e.kind in ("user", "assistant_reply")]
    assert rows == [("user", "start"), ("user", "first correction"), ("assistant_reply", "one"),
                    ("user", "second correction"), ("assistant_reply", "two")]
    assert result.undelivered == () and result.reply == "two"


async def test_all_folds_every_waiting_steer_into_one_step(tmp_path: Path):
    events, entries, result = await _steer_twice_during_first_step(tmp_path, "all")
    applied = [(e["text"], e["stepIndex"]) for e in events if e["type"] == "steer_applied"]
    assert applied == [("first correction", 1), ("second correction", 1)]
    rows = [(e.kind, e.text) for e in entries if e.kind in ("user", "assistant_reply")]
    assert rows == [("user", "start"), ("user", "first correction"), ("user", "second correction"),
                    ("assistant_reply", "one")]
    assert result.undelivered == () and result.reply == "one"


async def test_one_at_a_time_still_hands_back_a_steer_that_arrives_during_the_final_inference(tmp_path: Path):
    _configure(tmp_path, "one-at-a-time")
    holder: dict = {}

    def reply_and_steer(_request):
        holder["outcome"] = holder["rt"].steer(holder["sid"], "too late")
        return calls(("reply", {"text": "bye"}))

    rt = make_runtime(tmp_path, ScriptedProvider([reply_and_steer]))
    sid = rt.open_session(None, tmp_path).id
    holder.update(rt=rt, sid=sid)
    result = await rt.run_turn("hi", session_id=sid)
    assert holder["outcome"] is SteerOutcome.ACCEPTED
    assert result.undelivered == ("too late",) and result.reply == "bye"
    await rt.close()


def test_steer_mode_is_validated(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "agent": {"steerMode": "many"}}))
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert "steerMode" in str(err.value) and "one-at-a-time" in str(err.value)
