"""SlotManager: one stable main slot per session, a reserved reflection slot, no wrapped ids."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.llama_server.slot_manager import SlotManager


def test_session_gets_its_main_slot_from_the_first_step() -> None:
    slots = SlotManager(4)
    first = slots.main_slot("s1")
    assert first == 0
    assert slots.assignments() == {"s1": 0}


def test_main_slot_is_stable_for_the_session_life() -> None:
    slots = SlotManager(4)
    first = slots.main_slot("s1")
    for other in ("s2", "s3", "s4", "s5"):
        slots.main_slot(other)
    slots.release("s2")
    assert [slots.main_slot("s1") for _ in range(5)] == [first] * 5


def test_sessions_spread_over_the_least_used_main_slots() -> None:
    slots = SlotManager(4)
    assert [slots.main_slot(f"s{i}") for i in range(7)] == [0, 1, 2, 0, 1, 2, 0]


def test_assignment_is_deterministic() -> None:
    def run() -> list[int]:
        slots = SlotManager(3)
        picked = [slots.main_slot(name) for name in ("a", "b", "c")]
        slots.release("a")
        return picked + [slots.main_slot("d")]

    assert run() == run() == [0, 1, 0, 0]


def test_reflection_slot_reserved() -> None:
    slots = SlotManager(3)
    assert slots.reflection_slot() == 2
    assert 2 not in {slots.main_slot(f"s{i}") for i in range(10)}


def test_single_slot_uses_minus_one() -> None:
    slots = SlotManager(1)
    assert slots.reflection_slot() == -1
    assert slots.main_slot("s1") == 0


def test_two_slots_give_one_main_and_one_reflection() -> None:
    slots = SlotManager(2)
    assert (slots.main_slots, slots.reflection_slot()) == ((0,), 1)
    assert {slots.main_slot("a"), slots.main_slot("b")} == {0}


def test_without_reservation_every_slot_serves_sessions() -> None:
    slots = SlotManager(2, reserve_reflection=False)
    assert (slots.main_slot("a"), slots.main_slot("b"), slots.reflection_slot()) == (0, 1, -1)


def test_released_slot_is_handed_out_again() -> None:
    slots = SlotManager(3)
    slots.main_slot("a")
    slots.main_slot("b")
    slots.release("a")
    slots.release("never-seen")
    assert slots.main_slot("c") == 0


@pytest.mark.parametrize("total", [1, 2, 3, 8])
@pytest.mark.parametrize("reserve", [True, False])
def test_ids_are_never_out_of_range(total: int, reserve: bool) -> None:
    slots = SlotManager(total, reserve_reflection=reserve)
    handed = {slots.main_slot(f"s{i}") for i in range(3 * total)} | {slots.reflection_slot()}
    assert all(-1 <= slot < total for slot in handed)


@pytest.mark.parametrize("bad", [0, -2, 1.5])
def test_invalid_slot_count_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="total_slots"):
        SlotManager(bad)  # type: ignore[arg-type]
