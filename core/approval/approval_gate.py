"""The approval gate: the single live switch deciding whether a gated call may run.

A request is auto-approved when the live level is at or above its category's level;
otherwise the gate asks through the host's `ask` callback (CLI prompt, sidecar event,
Telegram button). With no way to ask, the answer is no. Unknown categories are treated
as `other` (asks below level 5).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable

import attrs

from atomic_agent.records.approval_category import ApprovalCategory

FALLBACK_CATEGORY = "other"


@attrs.frozen
class ApprovalRequest:
    session_id: str
    tool: str
    category: str
    label: str
    summary: str


@attrs.frozen
class ApprovalDecision:
    approved: bool
    reason: str  # "level" | "user" | "denied" | "no-host"


AskHost = Callable[[ApprovalRequest], Awaitable[bool]]


class ApprovalGate:
    def __init__(self, categories: Iterable[ApprovalCategory], level: int, ask: AskHost | None = None) -> None:
        self.categories = {c.name: c for c in categories}
        self._level = self._clamp(level)
        self.ask = ask

    @staticmethod
    def _clamp(level: int) -> int:
        return max(1, min(5, int(level)))

    @property
    def level(self) -> int:
        return self._level

    def set_level(self, level: int) -> int:
        self._level = self._clamp(level)
        return self._level

    def category(self, name: str) -> ApprovalCategory:
        return self.categories.get(name) or self.categories[FALLBACK_CATEGORY]

    async def request(self, session_id: str, tool: str, category: str, summary: str) -> ApprovalDecision:
        cat = self.category(category)
        if self._level >= cat.auto_approve_level:
            return ApprovalDecision(True, "level")
        if self.ask is None:
            return ApprovalDecision(False, "no-host")
        approved = await self.ask(ApprovalRequest(session_id, tool, cat.name, cat.label, summary))
        return ApprovalDecision(bool(approved), "user" if approved else "denied")
