"""The seam between the approval gate and where approvals are kept: what a backend's approval
records and approval audit do, and the runtime's one object for each whatever the backend.

The embedded backend keeps them in the state dir (`approvals.sqlite`, `audit/approvals.ndjson`);
a session backend plugin (PostgreSQL when storage.url is set) keeps them in its database, so
every host of a fleet answers the same records. The runtime makes its gate, and every surface
that answers through the gate (serve, sidecar, TUI, Telegram), hold one `BackendApprovals`
object before the backend is chosen: the backend's own records are opened on first use, so a
storage.url that cannot be used fails the first turn (as the sessions do), not the runtime's
construction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from atomic_agent.approval.approval_records import WAIT_POLL_S, ApprovalRecord, FrozenCall


class ApprovalRepository(Protocol):
    """Approval and question records, committed before shown and answered once (the
    invariants are approval_records' module docstring; every backend keeps all of them)."""

    def create(self, *, kind: str, session_id: str, category: str, level: int, summary: str, frozen: FrozenCall,
               ttl_s: float, turn_id: str | None = None, call_key: str | None = None,
               answerers: Sequence[str] = (), question: Mapping[str, Any] | None = None) -> ApprovalRecord: ...

    def answer(self, approval_id: str, decision: str, *, principal: str, surface: str,
               fingerprint: str | None = None, text: str | None = None) -> ApprovalRecord: ...

    def consume(self, approval_id: str) -> bool: ...

    def cancel(self, approval_id: str, why: str) -> bool: ...

    def expire(self, approval_id: str) -> bool: ...

    def expire_due(self) -> list[str]: ...

    def get(self, approval_id: str) -> ApprovalRecord: ...

    def find(self, states: Sequence[str] = (), limit: int = 200) -> list[ApprovalRecord]: ...

    def for_call(self, call_key: str) -> list[ApprovalRecord]: ...

    def parks(self, call_key: str) -> bool: ...

    def pending_now(self, limit: int = 200) -> list[ApprovalRecord]:
        """Pending records not yet due, newest first (by the clock that decides expiry)."""

    async def wait(self, approval_id: str, poll_s: float = WAIT_POLL_S) -> ApprovalRecord: ...

    def close(self) -> None: ...


class ApprovalAudit(Protocol):
    """The append-only log of every approval decision (who decided what, asked about what)."""

    def append(self, **fields: Any) -> None: ...

    def read(self) -> list[dict[str, Any]]: ...


class BackendApprovals:
    """The runtime's approval records: the configured backend's, opened on first use and
    closed with the runtime. Every method is the backend's own (see ApprovalRepository)."""

    def __init__(self, open_records: Callable[[], ApprovalRepository]) -> None:
        self._open = open_records
        self._opened: ApprovalRepository | None = None
        self._lock = threading.Lock()  # surfaces answer from their own threads

    @property
    def backend(self) -> ApprovalRepository:
        with self._lock:
            if self._opened is None:
                self._opened = self._open()
            return self._opened

    def create(self, *, kind: str, session_id: str, category: str, level: int, summary: str, frozen: FrozenCall,
               ttl_s: float, turn_id: str | None = None, call_key: str | None = None,
               answerers: Sequence[str] = (), question: Mapping[str, Any] | None = None) -> ApprovalRecord:
        return self.backend.create(kind=kind, session_id=session_id, category=category, level=level,
                                   summary=summary, frozen=frozen, ttl_s=ttl_s, turn_id=turn_id, call_key=call_key,
                                   answerers=answerers, question=question)

    def answer(self, approval_id: str, decision: str, *, principal: str, surface: str,
               fingerprint: str | None = None, text: str | None = None) -> ApprovalRecord:
        return self.backend.answer(approval_id, decision, principal=principal, surface=surface,
                                   fingerprint=fingerprint, text=text)

    def consume(self, approval_id: str) -> bool:
        return self.backend.consume(approval_id)

    def cancel(self, approval_id: str, why: str) -> bool:
        return self.backend.cancel(approval_id, why)

    def expire(self, approval_id: str) -> bool:
        return self.backend.expire(approval_id)

    def expire_due(self) -> list[str]:
        return self.backend.expire_due()

    def get(self, approval_id: str) -> ApprovalRecord:
        return self.backend.get(approval_id)

    def find(self, states: Sequence[str] = (), limit: int = 200) -> list[ApprovalRecord]:
        return self.backend.find(states, limit)

    def for_call(self, call_key: str) -> list[ApprovalRecord]:
        return self.backend.for_call(call_key)

    def parks(self, call_key: str) -> bool:
        return self.backend.parks(call_key)

    def pending_now(self, limit: int = 200) -> list[ApprovalRecord]:
        return self.backend.pending_now(limit)

    async def wait(self, approval_id: str, poll_s: float = WAIT_POLL_S) -> ApprovalRecord:
        return await self.backend.wait(approval_id, poll_s)

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, None
        if opened is not None:
            opened.close()


class BackendApprovalAudit:
    """The runtime's approval audit: the configured backend's, opened on first use."""

    def __init__(self, open_audit: Callable[[], ApprovalAudit]) -> None:
        self._open = open_audit
        self._opened: ApprovalAudit | None = None
        self._lock = threading.Lock()

    @property
    def backend(self) -> ApprovalAudit:
        with self._lock:
            if self._opened is None:
                self._opened = self._open()
            return self._opened

    def append(self, **fields: Any) -> None:
        self.backend.append(**fields)

    def read(self) -> list[dict[str, Any]]:
        return self.backend.read()
