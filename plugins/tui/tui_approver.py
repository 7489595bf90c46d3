"""The approval gate's `ask` for the TUI: each request becomes the approval modal, one at a time.

The runtime is created before the app, so the approver exists first and the app attaches
itself when it mounts; a request that arrives with no app attached (or after it closed) is
denied, as the gate treats any host that cannot ask.
"""

from __future__ import annotations

import asyncio
from typing import Any

from atomic_agent.api import ApprovalAnswer


class TuiApprover:
    def __init__(self) -> None:
        self.app: Any = None
        self._lock = asyncio.Lock()  # two sessions asking at once see two modals in turn

    def attach(self, app: Any) -> None:
        self.app = app

    async def ask(self, request: Any) -> ApprovalAnswer:
        from atomic_agent.plugins.tui.approval_modal import ApprovalModal, decision_for

        async with self._lock:
            app = self.app
            if app is None or not app.is_running:
                return ApprovalAnswer.deny()
            answered: asyncio.Future[str] = asyncio.get_running_loop().create_future()

            def done(key: str | None) -> None:
                if not answered.done():
                    answered.set_result(key or "n")

            app.approval_shown(request)
            app.push_screen(ApprovalModal(request), done)
            try:
                key = await answered
            finally:
                app.approval_closed(request)
            return ApprovalAnswer(decision_for(request, key))
