"""The provider_switched notice: one per state transition of a partition, never on sticky turns."""

from __future__ import annotations

from typing import Any, Literal

import attrs

PROVIDER_SWITCHED = "provider_switched"
Direction = Literal["away", "back"]


@attrs.frozen
class SwitchNotice:
    direction: Direction
    from_id: str
    to_id: str
    reason: str
    session_id: str | None = None

    def as_event(self) -> dict[str, Any]:
        """The loop event: {type: provider_switched, direction, from, to, reason, sessionId}."""
        event: dict[str, Any] = {"type": PROVIDER_SWITCHED, "direction": self.direction, "from": self.from_id,
                                 "to": self.to_id, "reason": self.reason}
        if self.session_id is not None:
            event["sessionId"] = self.session_id
        return event
