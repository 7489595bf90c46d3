"""A real ApprovalGate with the standard categories and a recording host."""

from __future__ import annotations

from typing import Any

from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate
from tests.plugins.os.fs_kit import AskRecorder


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_gate(level: int = 1, answers: list[Any] | None = None, **kw: Any) -> tuple[ApprovalGate, AskRecorder]:
    asker = AskRecorder(list(answers or []))
    return ApprovalGate(STANDARD_CATEGORIES, level, asker, **kw), asker
