"""The FIFO invariant used for owners in separate processes: a send begun after another send's
acknowledgement must run after it; overlapping sends may be acknowledged in either order."""
from __future__ import annotations

from tests.chaos.invariants import _sends_begun_after_an_acknowledgement_follow_it as check


def ack(kind: str, text: str) -> dict[str, str]:
    return {"kind": kind, "session": "s", "text": text}


def test_a_send_begun_after_an_acknowledgement_that_runs_first_is_a_violation() -> None:
    acks = [ack("sending", "a"), ack("admitted", "a"), ack("sending", "b"), ack("admitted", "b")]
    assert check(acks, "s", {"b": 0, "a": 1}, ["b", "a"])
    assert not check(acks, "s", {"a": 0, "b": 1}, ["a", "b"])


def test_overlapping_sends_may_be_acknowledged_in_either_order() -> None:
    acks = [ack("sending", "a"), ack("sending", "b"), ack("admitted", "b"), ack("admitted", "a")]
    assert not check(acks, "s", {"a": 0, "b": 1}, ["a", "b"])
    assert not check(acks, "s", {"b": 0, "a": 1}, ["b", "a"])
