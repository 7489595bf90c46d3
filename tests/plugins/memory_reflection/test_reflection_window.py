"""v2.5 B locked invariants: cadence every K turns over the last W complete pairs, final
flush on `finish`, a finish with no pair is a silent no-op, the stable prefix is unchanged,
sessions keep their own cadence, and no timer is involved."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from atomic_agent.api import ExchangePair
from atomic_agent.hook_records import TurnDigest, exchange_pairs
from atomic_agent.plugins.memory_reflection.reflection_window import ReflectionWindow
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider

WINDOW = ReflectionWindow(SimpleNamespace(enabled=True, trigger_every_turns=3, window_turns=2))


def digest(turn: int, reason: str = "reply", history: int = 0, reply: str = "r") -> TurnDigest:
    pairs = tuple(ExchangePair(f"u{i}", f"r{i}") for i in range(history))
    return TurnDigest("s", turn, f"u{turn}", reply, reason=reason, history=pairs)


def test_fires_every_k_turns_over_the_last_w_pairs_oldest_first() -> None:
    assert WINDOW.window(digest(0)) is None and WINDOW.window(digest(1, history=1)) is None
    window = WINDOW.window(digest(2, history=2))
    assert window == (ExchangePair("u1", "r1"), ExchangePair("u2", "r"))


def test_finish_always_flushes_even_mid_cadence() -> None:
    assert WINDOW.window(digest(3, reason="finish", history=3)) == (ExchangePair("u2", "r2"), ExchangePair("u3", "r"))


def test_finish_on_an_empty_session_is_a_silent_no_op() -> None:
    assert WINDOW.window(digest(0, reason="finish", reply="")) is None


def test_pairs_are_complete_and_chronological() -> None:
    rows = [TranscriptEntry("user", 0, "a"), TranscriptEntry("assistant_tool_call", 0, ""),
            TranscriptEntry("assistant_reply", 0, "A"), TranscriptEntry("user", 1, "b"),
            TranscriptEntry("user", 2, "c"), TranscriptEntry("assistant_reply", 2, "C"),
            TranscriptEntry("user", 3, "orphan")]
    assert exchange_pairs(rows, 4) == (ExchangePair("a", "A"), ExchangePair("c", "C"))
    assert exchange_pairs(rows, 2) == (ExchangePair("a", "A"),)


async def three_turns(state: Path, config: dict, sessions: int = 1) -> RoutingProvider:
    script = [calls(("reply", {"text": f"reply {i}"})) for i in range(3 * sessions)]
    provider = RoutingProvider(script, "NONE")
    runtime = make_memory_runtime(state, provider, ALL_MEMORY, config=config)
    ids: list[str | None] = [None] * sessions
    for turn in range(3):
        for s in range(sessions):
            result = await runtime.run_turn(f"session {s} message {turn}", session_id=ids[s], working_dir=state)
            ids[s] = result.session_id
            await settle(runtime)
    await runtime.close()
    return provider


async def test_windowed_reflection_keeps_the_stable_prefix_and_renders_numbered_turns(tmp_path: Path) -> None:
    off = await three_turns(tmp_path / "off", {})
    on = await three_turns(tmp_path / "on", {"memorySegmentation": {"enabled": True}})
    assert len(off.reflection_requests) == 3 and len(on.reflection_requests) == 1
    windowed = on.reflection_requests[0]
    prefix = windowed.prompt[: windowed.prefix_length]
    assert all(r.prompt[: r.prefix_length] == prefix for r in off.reflection_requests)
    tail = windowed.prompt[windowed.prefix_length:]
    assert tail.index("### turn 1\nUSER: session 0 message 0") < tail.index("### turn 3\nUSER: session 0 message 2")


async def test_cross_session_cadence_stays_per_session(tmp_path: Path) -> None:
    provider = await three_turns(tmp_path, {"memorySegmentation": {"enabled": True}}, sessions=2)
    tails = [r.prompt[r.prefix_length:] for r in provider.reflection_requests]
    assert len(tails) == 2  # each session fired once, at its own third turn
    assert all(("session 0" in t) != ("session 1" in t) for t in tails)
