"""Which `os.shell.run` calls run boxed and which still ask, for every `sandbox.mode`: the
decision table docs/sandbox.md documents, pinned against a scripted sandbox (the real box is
tested in tests/plugins/sandbox)."""

from __future__ import annotations

from types import SimpleNamespace

import attrs
import pytest

from atomic_agent.plugins.os.shell.sandbox_placement import BOXED_APPROVED, BOXED_UNASKED, UNBOXED, place_in_box

LADDER_ASKS = {"shell"}  # at levels 1-3 with no grant: the only category whose ask the box replaces


@attrs.define
class ScriptedSandbox:
    mode: str
    problem: str | None = None
    worktree: bool = False

    def boxes_instead_of_asking(self, session_id: str, category: str, command_shape: str | None) -> bool:
        return self.mode != "off" and category in LADDER_ASKS

    async def unavailable(self) -> str | None:
        return self.problem


CTX = SimpleNamespace(session_id="s1")
OTHER = ("shell_dangerous", "shell_undecidable", "persistence")


async def test_without_a_sandbox_or_with_mode_off_nothing_is_boxed() -> None:
    assert await place_in_box(None, CTX, "shell", "ls") is UNBOXED
    for category in ("shell", *OTHER):
        assert await place_in_box(ScriptedSandbox("off"), CTX, category, "ls") is UNBOXED


async def test_auto_boxes_only_the_calls_whose_ask_it_replaces() -> None:
    box = ScriptedSandbox("auto")
    assert await place_in_box(box, CTX, "shell", "ls") is BOXED_UNASKED
    for category in OTHER:
        assert await place_in_box(box, CTX, category, "rm") is UNBOXED


async def test_always_boxes_every_call_and_approved_ones_keep_the_network() -> None:
    box = ScriptedSandbox("always")
    assert await place_in_box(box, CTX, "shell", "ls") is BOXED_UNASKED
    for category in OTHER:
        assert await place_in_box(box, CTX, category, "rm") is BOXED_APPROVED


@pytest.mark.parametrize("category", ["shell", *OTHER])
async def test_always_without_a_working_box_fails_every_call_with_the_reason(category: str) -> None:
    box = ScriptedSandbox("always", problem="bubblewrap was not found; install bubblewrap")
    assert await place_in_box(box, CTX, category, "ls") == "bubblewrap was not found; install bubblewrap"


async def test_auto_without_a_working_box_falls_back_to_asking() -> None:
    box = ScriptedSandbox("auto", problem="bubblewrap was not found")
    assert await place_in_box(box, CTX, "shell", "ls") is UNBOXED
