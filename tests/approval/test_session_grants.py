"""Session grants: [s] a category, [a] a command shape, per session, bounded, never trust_config."""

from __future__ import annotations

import pytest

from atomic_agent.api import ApprovalAnswer
from tests.approval.gate_kit import FakeClock, make_gate


async def test_session_grant_silences_its_category_for_that_session() -> None:
    gate, asker = make_gate(1, [ApprovalAnswer.session()])
    assert (await gate.request("s1", "os.shell.run", "shell", "ls")).reason == "user"
    later = await gate.request("s1", "os.shell.run", "shell", "make")
    assert later.approved and later.reason == "grant" and later.grant == "category:shell"
    assert len(asker.requests) == 1
    assert gate.level == 1  # a grant is a point exception, not a move of the standing level


async def test_grant_from_another_session_is_not_used() -> None:
    gate, asker = make_gate(1, [ApprovalAnswer.session()])
    await gate.request("s1", "os.shell.run", "shell", "ls")
    other = await gate.request("s2", "os.shell.run", "shell", "ls")  # a background-task turn, say
    assert not other.approved and other.reason == "denied" and len(asker.requests) == 2
    assert (await gate.request("s1", "os.shell.run", "shell", "ls")).reason == "grant"


async def test_shape_grant_from_another_session_is_not_used() -> None:
    gate, asker = make_gate(1, [ApprovalAnswer.shape()])
    await gate.request("s1", "os.shell.run", "shell", "git status", command_shape="git")
    assert not (await gate.request("s2", "os.shell.run", "shell", "git log", command_shape="git")).approved


async def test_shape_grant_covers_only_that_binary() -> None:
    gate, asker = make_gate(1, [ApprovalAnswer.shape()])
    await gate.request("s1", "os.shell.run", "shell", "git status", command_shape="git")
    assert (await gate.request("s1", "os.shell.run", "shell", "git log", command_shape="git")).grant == "shape:git"
    assert not (await gate.request("s1", "os.shell.run", "shell", "rm x", command_shape="rm")).approved
    assert not (await gate.request("s1", "os.shell.run", "shell", "bash -c x", command_shape=None)).approved


async def test_session_grant_never_covers_trust_config() -> None:
    gate, asker = make_gate(4, [ApprovalAnswer.session(), ApprovalAnswer.session()])
    await gate.request("s1", "os.fs.write", "trust_config", "config.json")  # [s] answered: no grant recorded
    assert gate.grants_snapshot("s1") == []
    second = await gate.request("s1", "os.fs.write", "trust_config", "config.json")
    assert second.reason == "user" and len(asker.requests) == 2
    with pytest.raises(ValueError, match="cannot be granted"):
        gate.grant("s1", "trust_config")


async def test_prompt_offers_grants_only_where_they_are_possible() -> None:
    gate, asker = make_gate(1, [True, True, True])
    await gate.request("s", "os.shell.run", "shell", "git st", command_shape="git")
    await gate.request("s", "os.shell.run", "shell", "bash -c 'x'")
    await gate.request("s", "os.fs.write", "trust_config", ".env")
    offers = [(r.can_grant_category, r.can_grant_shape) for r in asker.requests]
    assert offers == [(True, True), (True, False), (False, False)]


async def test_host_cannot_widen_a_grant_beyond_the_request() -> None:
    # [a] on a request without a shape grants nothing: the grant comes from the gate's pending request
    gate, asker = make_gate(1, [ApprovalAnswer.shape()])
    assert (await gate.request("s1", "os.fs.write", "fs_write_home", "x")).grant is None
    assert gate.grants_snapshot() == []


async def test_grant_expires_after_its_time_bound() -> None:
    clock = FakeClock()
    gate, asker = make_gate(1, [ApprovalAnswer.session(ttl_s=3600)], clock=clock)
    await gate.request("s1", "t", "http", "GET a")
    clock.now += 3599
    assert (await gate.request("s1", "t", "http", "GET b")).reason == "grant"
    clock.now += 2
    assert not (await gate.request("s1", "t", "http", "GET c")).approved
    assert gate.grants_snapshot("s1") == []


async def test_grant_expires_after_its_use_count() -> None:
    gate, asker = make_gate(1, [ApprovalAnswer.session(uses=3)])
    await gate.request("s1", "t", "http", "GET 0")
    reasons = [(await gate.request("s1", "t", "http", f"GET {i}")).reason for i in range(1, 5)]
    assert reasons == ["grant", "grant", "grant", "denied"]


async def test_clear_session_grants_targeted_and_full() -> None:
    gate, _ = make_gate(1)
    gate.grant("s1", "shell")
    gate.grant("s2", "http")
    gate.grant("s2", "shell", "git")
    assert {(g["sessionId"], g["kind"], g["value"]) for g in gate.grants_snapshot()} == {
        ("s1", "category", "shell"), ("s2", "category", "http"), ("s2", "shape", "git")}
    gate.clear_session_grants("s1")
    assert {g["sessionId"] for g in gate.grants_snapshot()} == {"s2"}
    gate.clear_session_grants()
    assert gate.grants_snapshot() == []


async def test_session_grants_never_persist(tmp_path) -> None:
    gate, _ = make_gate(1)
    gate.grant("s1", "shell")
    fresh, asker = make_gate(1)  # a new process: a new gate
    assert not (await fresh.request("s1", "t", "shell", "ls")).approved


def test_grant_bounds_must_be_positive() -> None:
    with pytest.raises(ValueError):
        ApprovalAnswer.session(ttl_s=0)
    with pytest.raises(ValueError):
        ApprovalAnswer.session(uses=-1)
