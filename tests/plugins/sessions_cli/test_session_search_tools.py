"""sessions.search / sessions.open: read-only, scoped by channel, capped, and FTS syntax is text."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ToolContext
from atomic_agent.plugins import sessions_cli
from atomic_agent.sessions.transcript_entry import REPLY, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.testing.runtime_kit import runtime_for_test
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls


async def no_approval(*_a: Any, **_k: Any) -> bool:
    return False


def context(session_id: str, tmp_path: Path) -> ToolContext:
    return ToolContext(session_id, tmp_path, tmp_path, asyncio.Event(), no_approval)


async def started(tmp_path: Path, config: dict[str, Any] | None = None) -> Any:
    replies = [calls(("reply", {"text": t})) for t in ("The staging database listens on 5433.", "noted", "noted",
                                                         "noted")]
    return await runtime_for_test(tmp_path / "state", plugins={"sessions_cli": sessions_cli}, config=config,
                                  provider=ScriptedProvider(replies))


async def call(runtime: Any, tool: str, args: dict[str, Any], session_id: str, tmp_path: Path) -> Any:
    return await runtime.registry.get(tool).run(args, context(session_id, tmp_path))


async def test_a_session_finds_and_opens_its_own_channels_past_sessions(tmp_path: Path) -> None:
    runtime = await started(tmp_path)
    old = await runtime.run_turn("which port does the staging database use?", working_dir=tmp_path)
    now = await runtime.run_turn("what did we say about staging?", working_dir=tmp_path)
    found = await call(runtime, "sessions.search", {"query": "staging database"}, now.session_id, tmp_path)
    assert found.status == "ok" and [h["sessionId"] for h in found.details["hits"]] == [old.session_id]
    opened = await call(runtime, "sessions.open", {"id": old.session_id}, now.session_id, tmp_path)
    assert opened.status == "ok"
    assert "turn 0 user: which port does the staging database use?" in opened.summary
    assert "turn 0 assistant: The staging database listens on 5433." in opened.summary
    await runtime.close()


async def test_a_telegram_session_cannot_read_a_serve_clients_session_unless_configured(tmp_path: Path) -> None:
    runtime = await started(tmp_path)
    served = await runtime.run_turn("the staging database port", working_dir=tmp_path, origin="http")
    chat = await runtime.run_turn("staging?", working_dir=tmp_path, origin="telegram")
    found = await call(runtime, "sessions.search", {"query": "staging database port"}, chat.session_id, tmp_path)
    assert found.status == "ok" and found.details["hits"] == []
    refused = await call(runtime, "sessions.open", {"id": served.session_id}, chat.session_id, tmp_path)
    absent = await call(runtime, "sessions.open", {"id": "no-such-session"}, chat.session_id, tmp_path)
    assert refused.status == absent.status == "error"
    assert refused.summary.replace(served.session_id, "X") == absent.summary.replace("no-such-session", "X")
    await runtime.close()

    opened = await started(tmp_path, config={"sessionSearch": {"alsoReadable": ["http"]}})
    found = await call(opened, "sessions.search", {"query": "staging database port"}, chat.session_id, tmp_path)
    assert [h["sessionId"] for h in found.details["hits"]] == [served.session_id]
    await opened.close()


async def test_bad_queries_are_clear_errors_and_fts_syntax_is_text(tmp_path: Path) -> None:
    runtime = await started(tmp_path)
    old = await runtime.run_turn("NEAR the staging box", working_dir=tmp_path)
    now = await runtime.run_turn("hello", working_dir=tmp_path)
    empty = await call(runtime, "sessions.search", {"query": "*** ()"}, now.session_id, tmp_path)
    assert empty.status == "error" and "no words" in empty.summary
    literal = await call(runtime, "sessions.search", {"query": 'NEAR(staging "box'}, now.session_id, tmp_path)
    assert [h["sessionId"] for h in literal.details["hits"]] == [old.session_id]
    limit = await call(runtime, "sessions.search", {"query": "box", "limit": 0}, now.session_id, tmp_path)
    assert limit.status == "error" and "limit" in limit.summary
    await runtime.close()


async def test_opening_a_10mb_transcript_is_capped_newest_lines_kept(tmp_path: Path) -> None:
    runtime = await started(tmp_path)
    now = await runtime.run_turn("hello", working_dir=tmp_path)
    big = runtime.sessions.create(tmp_path)
    rows = []
    for turn in range(20):
        rows += [TranscriptEntry(TURN_STARTED, turn), TranscriptEntry(USER, turn, text=f"message {turn} " + "x" * 500_000),
                 TranscriptEntry(REPLY, turn, text=f"reply {turn}")]
    runtime.sessions.append(big, rows)
    opened = await call(runtime, "sessions.open", {"id": big.id}, now.session_id, tmp_path)
    assert opened.status == "ok" and len(opened.summary) <= 12_000
    assert "turn 19 assistant: reply 19" in opened.summary and "oldest" in opened.summary.splitlines()[0]
    await runtime.close()


def test_the_cli_searches_and_opens(tmp_path: Path) -> None:
    from atomic_agent.sessions.session_store import SessionStore

    state = tmp_path / "state"
    state.mkdir()
    store = SessionStore(state)
    session = store.create(tmp_path)
    store.append(session, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="the okapi question"),
                           TranscriptEntry(REPLY, 0, text="okapis are giraffids")])
    store.close()
    cli = [sys.executable, "-m", "atomic_agent.cli.main", "--state-dir", str(state), "sessions"]
    found = subprocess.run([*cli, "search", "okapi*", "--json"], capture_output=True, text=True, timeout=120)
    assert found.returncode == 0, found.stderr
    assert [h["sessionId"] for h in json.loads(found.stdout)] == [session.id]
    opened = subprocess.run([*cli, "open", session.id], capture_output=True, text=True, timeout=120)
    assert opened.returncode == 0 and "turn 0 assistant: okapis are giraffids" in opened.stdout
    bad = subprocess.run([*cli, "search", "x", "--channel", "mars"], capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "--channel must be one of" in bad.stderr
