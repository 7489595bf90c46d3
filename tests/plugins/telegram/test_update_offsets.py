"""An update is confirmed only after what it asked for is durable; in-flight updates that
Telegram hands out again are not handled twice."""

from __future__ import annotations

from atomic_agent.plugins.telegram.update_offsets import UpdateOffsets


def test_the_offset_stops_at_the_oldest_update_in_flight() -> None:
    offsets = UpdateOffsets()
    assert offsets.next_offset is None
    assert offsets.admit(10) and offsets.admit(11) and offsets.admit(12)
    offsets.settle(11)
    offsets.settle(12)
    assert offsets.next_offset == 10  # 10 is not durable yet: nothing from 10 on is confirmed
    offsets.settle(10)
    assert offsets.next_offset == 13


def test_an_update_handed_out_again_is_handled_once() -> None:
    offsets = UpdateOffsets()
    assert offsets.admit(5)
    assert not offsets.admit(5)  # in flight
    offsets.settle(5)
    assert not offsets.admit(5)  # confirmed
    assert offsets.admit(6)
