"""Per-session approval routing: a channel routes its own session's requests to itself
(`route_session`); every other session still asks the host; levels, grants and the
non-grantable categories are decided before any routing, exactly as for the host."""

from __future__ import annotations

from typing import Any

from tests.approval.gate_kit import make_gate


class Phone:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def __call__(self, request: Any) -> bool:
        self.asked.append(request.session_id)
        return self.answer


async def test_a_routed_session_asks_its_channel_and_the_others_ask_the_host() -> None:
    gate, host = make_gate(1, answers=[True])
    phone = Phone(answer=False)
    gate.route_session("telegram-session", phone)
    routed = await gate.request("telegram-session", "os.shell", "shell", "rm -rf build")
    other = await gate.request("tui-session", "os.shell", "shell", "ls")
    assert (routed.approved, routed.reason) == (False, "denied") and phone.asked == ["telegram-session"]
    assert other.approved and len(host.requests) == 1


async def test_unrouting_gives_the_session_back_to_the_host_only_for_its_own_route() -> None:
    gate, host = make_gate(1, answers=[True, True])
    first, second = Phone(True), Phone(True)
    gate.route_session("s", first)
    gate.route_session("s", second)  # re-bound (e.g. a restarted channel)
    gate.unroute_session("s", first)  # a stale unroute changes nothing
    await gate.request("s", "os.shell", "shell", "ls")
    assert second.asked == ["s"] and first.asked == []
    gate.unroute_session("s", second)
    await gate.request("s", "os.shell", "shell", "ls")
    assert len(host.requests) == 1


async def test_the_level_still_decides_before_a_routed_channel_is_asked() -> None:
    gate, _host = make_gate(5)
    phone = Phone(False)
    gate.route_session("s", phone)
    decision = await gate.request("s", "os.shell", "shell", "ls")
    assert decision.approved and decision.reason == "level" and phone.asked == []
