"""Slots and token counts are optional provider capabilities, found structurally: a provider
declares them by implementing the methods; wrappers answer for what they wrap."""

from __future__ import annotations

from atomic_agent.llm.provider_protocol import SlotAffinity, TokenCounter, slot_affinity, token_counter


class Slotted:
    def slot_for(self, session_id: str) -> int:
        return 3

    def reflection_slot(self) -> int:
        return 1

    async def total_slots(self) -> int:
        return 4

    async def count_tokens(self, text: str) -> int | None:
        return len(text)


class Hosted:
    async def context_window(self) -> int | None:
        return None


class HalfSlotted:  # slot_for without the rest is not the capability
    def slot_for(self, session_id: str) -> int:
        return 0


class Wrapper:
    def __init__(self, inner: object) -> None:
        self.inner = inner

    @property
    def wrapped_provider(self) -> object:
        return self.inner


def test_a_provider_with_the_methods_declares_the_capability_and_others_do_not() -> None:
    slotted = Slotted()
    assert isinstance(slotted, SlotAffinity) and isinstance(slotted, TokenCounter)
    assert slot_affinity(slotted) is slotted and token_counter(slotted) is slotted
    assert slot_affinity(Hosted()) is None and token_counter(Hosted()) is None
    assert slot_affinity(HalfSlotted()) is None


def test_wrappers_answer_for_the_provider_they_wrap_however_deep() -> None:
    slotted = Slotted()
    assert slot_affinity(Wrapper(Wrapper(slotted))) is slotted
    assert token_counter(Wrapper(slotted)) is slotted
    assert slot_affinity(Wrapper(Hosted())) is None
