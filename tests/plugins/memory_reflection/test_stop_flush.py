"""v2.5 B at a graceful stop: the turns since a session's last cadence point are reflected
when the runtime closes (runtime_stopping) instead of being lost; a session whose window
just fired has nothing pending; the newest sessions come first within
`stopFlushSessions`; a pending window is flushed once; segmentation off adds no call."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from atomic_agent.api import ExchangePair
from atomic_agent.hook_records import TurnDigest
from atomic_agent.plugins.memory_reflection.reflection_window import ReflectionWindow
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider


def digest(session: str, turn: int, history: int = 0, reason: str = "reply") -> TurnDigest:
    pairs = tuple(ExchangePair(f"{session}u{i}", f"{session}r{i}") for i in range(history))
    return TurnDigest(session, turn, f"{session}u{turn}", f"{session}r{turn}", reason=reason, history=pairs)


def window(every: int = 3, width: int = 5, flush: int = 8) -> ReflectionWindow:
    return ReflectionWindow(SimpleNamespace(enabled=True, trigger_every_turns=every, window_turns=width,
                                            stop_flush_sessions=flush))


def test_pending_pairs_are_those_since_the_last_cadence_point() -> None:
    w = window()
    for turn in range(5):  # turn 3 fires; turns 4 and 5 are pending
        w.window(digest("a", turn, history=turn))
    (pending,) = w.take_pending()
    assert pending.pairs == (ExchangePair("au3", "ar3"), ExchangePair("au4", "ar4"))
    assert w.take_pending() == []  # taken once


def test_a_finish_clears_the_pending_window_and_a_late_older_digest_never_replaces_a_newer_one() -> None:
    w = window()
    w.window(digest("a", 0))
    w.window(digest("a", 1, history=1, reason="finish"))
    assert w.take_pending() == []
    w.window(digest("b", 1, history=1))
    w.window(digest("b", 0))
    (pending,) = w.take_pending()
    assert pending.digest.turn_index == 1 and pending.pairs == (ExchangePair("bu0", "br0"), ExchangePair("bu1", "br1"))


def test_the_newest_sessions_come_first_within_the_limit() -> None:
    w = window(flush=2)
    for session in ("old", "mid", "new"):
        w.window(digest(session, 0))
    assert [p.digest.session_id for p in w.take_pending()] == ["new", "mid"]


def test_the_window_never_exceeds_w_pairs() -> None:
    w = window(every=10, width=2)
    for turn in range(6):
        w.window(digest("a", turn, history=turn))
    (pending,) = w.take_pending()
    assert pending.pairs == (ExchangePair("au4", "ar4"), ExchangePair("au5", "ar5"))


async def run_session(state: Path, turns: int, config: dict, sessions: int = 1,
                      reflect: str = "NONE") -> tuple[RoutingProvider, list[str]]:
    provider = RoutingProvider([calls(("reply", {"text": f"reply {i}"})) for i in range(turns * sessions)], reflect)
    runtime = make_memory_runtime(state, provider, ALL_MEMORY, config=config)
    await runtime.start()  # runtime_stopping (the stop flush) answers only a started runtime
    ids: list[str | None] = [None] * sessions
    for turn in range(turns):
        for s in range(sessions):
            result = await runtime.run_turn(f"session {s} message {turn}", session_id=ids[s], working_dir=state)
            ids[s] = result.session_id
            await settle(runtime)
    before = len(provider.reflection_requests)
    await runtime.close()
    return provider, [r.prompt[r.prefix_length:] for r in provider.reflection_requests[before:]]


ON = {"memorySegmentation": {"enabled": True}}


async def test_a_graceful_stop_reflects_the_turns_since_the_last_cadence_point(tmp_path: Path) -> None:
    provider, flushed = await run_session(tmp_path, 4, ON)
    assert len(provider.reflection_requests) == 2  # the cadence point at turn 3, then the stop
    (tail,) = flushed
    assert "session 0 message 3" in tail and "session 0 message 2" not in tail


async def test_a_stop_right_after_a_cadence_point_reflects_nothing_more(tmp_path: Path) -> None:
    provider, flushed = await run_session(tmp_path, 3, ON)
    assert len(provider.reflection_requests) == 1 and flushed == []


async def test_the_flush_writes_what_the_pending_turns_said(tmp_path: Path) -> None:
    from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
    from atomic_agent.plugins.memory.note_store import NoteStore

    _, flushed = await run_session(tmp_path, 2, ON, reflect="NOTE moved to Lisbon in May [move]")
    (tail,) = flushed
    assert "session 0 message 0" in tail and "session 0 message 1" in tail
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    try:
        assert [n.content for n in NoteStore(db).recent(10)] == ["moved to Lisbon in May"]
    finally:
        db.close()


async def test_stop_flush_sessions_bounds_the_stop_and_zero_turns_it_off(tmp_path: Path) -> None:
    _, flushed = await run_session(tmp_path / "one", 1, {"memorySegmentation": {"enabled": True,
                                                                                "stopFlushSessions": 1}}, sessions=3)
    assert len(flushed) == 1 and "session 2 message 0" in flushed[0]
    _, none = await run_session(tmp_path / "zero", 1, {"memorySegmentation": {"enabled": True,
                                                                              "stopFlushSessions": 0}})
    assert none == []


async def test_without_segmentation_a_stop_adds_no_reflection(tmp_path: Path) -> None:
    provider, flushed = await run_session(tmp_path, 2, {})
    assert len(provider.reflection_requests) == 2 and flushed == []
