"""The approval gate's `ask` for the TUI: each request becomes the approval modal, one at a time.

The runtime is created before the app, so the approver exists first and the app attaches
itself when it mounts; a request that arrives with no app attached (or after it closed) is
denied, as the gate treats any host that cannot ask.

Approvals are durable records answered once from any surface: when another surface answers
first, the gate withdraws this prompt (cancels `ask`), the modal closes and a notice says
who answered. The same modal, under the same one-at-a-time lock, shows the records other
surfaces raised (shared_approvals); `asked` keeps the ids of the records the gate handed
this approver, so those are never shown twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from atomic_agent.api import ApprovalAnswer


class TuiApprover:
    def __init__(self) -> None:
        self.app: Any = None
        self._lock = asyncio.Lock()  # two sessions asking at once see two modals in turn
        self.asked: set[str] = set()

    def attach(self, app: Any) -> None:
        self.app = app

    async def ask(self, request: Any) -> ApprovalAnswer:
        from atomic_agent.plugins.tui.approval_modal import ApprovalModal, decision_for

        if request.approval_id:
            self.asked.add(request.approval_id)
        app = self.app
        if app is None or not app.is_running:
            return ApprovalAnswer.deny()
        app.approval_shown(request)
        try:
            key = await self.show(ApprovalModal(request))
        except asyncio.CancelledError:
            self._say_settled(request)  # withdrawn by the gate: answered elsewhere, or the turn stopped
            raise
        finally:
            app.approval_closed(request)
        return ApprovalAnswer(decision_for(request, key))

    async def show(self, modal: Any, *, opened: Callable[[Any], None] | None = None,
                   still_open: Callable[[], bool] | None = None) -> Any:
        """Show `modal` (an approval or a question) when no other is open; what it was answered
        with, or None when the app is gone, the record was settled meanwhile (`still_open`), or
        the modal was withdrawn."""
        async with self._lock:
            app = self.app
            if app is None or not app.is_running or (still_open is not None and not still_open()):
                return None
            answered: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

            def done(result: Any) -> None:
                if not answered.done():
                    answered.set_result(result)

            app.push_screen(modal, done)
            if opened is not None:
                opened(modal)
            try:
                return await answered
            except asyncio.CancelledError:
                self.withdraw(modal)
                raise

    def withdraw(self, modal: Any) -> None:
        """Close a modal whose request no longer waits (nothing is answered by closing it)."""
        try:
            modal.withdraw()
        except Exception as exc:
            if self.app is not None:
                self.app.event_log.add("notice", f"could not close a settled approval: {type(exc).__name__}: {exc}")

    def _say_settled(self, request: Any) -> None:
        from atomic_agent.plugins.tui.shared_approvals import PENDING, settled_words

        records = getattr(getattr(self.app.runtime, "gate", None), "records", None)
        if records is None or not request.approval_id:
            return
        try:
            record = records.get(request.approval_id)
        except Exception:
            return
        if record.state != PENDING:
            self.app.notify(settled_words(record), timeout=8)
