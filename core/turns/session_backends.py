"""Which implementation of the session-state protocols a runtime uses: one record per backend.

The runtime opens its store and the lifecycle builds its ledger and steering queue through
the backend record, never by naming SQLite classes, so a PostgreSQL backend is one more
record here (and one line in tests/sessions/session_backends.py puts it under the conformance suite).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_owner import OwnerLease
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository

if TYPE_CHECKING:
    from atomic_agent.approval.approval_repository import ApprovalAudit, ApprovalRepository
    from atomic_agent.runtime.boot_context import BootContext


def embedded_approvals(state_dir: Path) -> ApprovalRepository:
    from atomic_agent.approval.approval_records import ApprovalRecords

    return ApprovalRecords.for_state_dir(state_dir)


def embedded_approval_audit(state_dir: Path) -> ApprovalAudit:
    from atomic_agent.approval.approval_audit_log import ApprovalAuditLog, audit_path

    return ApprovalAuditLog(audit_path(state_dir))


@attrs.frozen
class SessionBackend:
    """Factories for the three repositories and the owner lease; `ledger` and `steers` take a
    store this same backend opened (they share its transactions) and the owner name of this
    process (the lease's)."""

    name: str
    open_store: Callable[[Path], SessionRepository]  # the state directory -> a new store object
    ledger: Callable[[Any, str], TurnRepository]
    steers: Callable[[Any, str], SteerRepository]
    # this process's owner name and the liveness of others (owner, is_alive, release): a lock
    # file per process for the embedded store, which only one host shares; a shared database
    # needs a liveness every host can see
    lease: Callable[[Path], OwnerLease] = OwnerLease
    # the approval records and the approval audit every surface of every host sharing this
    # backend answers and appends to (approval_repository): the state dir's files when embedded
    approvals: Callable[[Path], ApprovalRepository] = embedded_approvals
    approval_audit: Callable[[Path], ApprovalAudit] = embedded_approval_audit


SQLITE_BACKEND = SessionBackend("sqlite", SessionStore, TurnLedger, SteerQueue)
DEFAULT_BACKEND = SQLITE_BACKEND  # what a runtime, and a command without one, uses
# the single-owner service a plugin provides to replace SQLite (e.g. `postgresql` when storage.url
# names a PostgreSQL database): its factory returns a SessionBackend, or None to keep the default
SESSION_BACKEND_SERVICE = "session_backend"


def open_session_store(where: Path | BootContext, backend: SessionBackend | None = None) -> SessionRepository:
    """A new store object for a command that needs no runtime. Given the command's boot
    context (`current_cli_state(ctx).require()`), it is the store the runtime would use: the
    configured backend's (storage.url: PostgreSQL), else the state dir's SQLite. Given a
    state directory, that directory's embedded SQLite store (what `storage migrate` copies).
    SessionStoreError when the configured backend cannot be used."""
    if isinstance(where, Path):
        return (backend or DEFAULT_BACKEND).open_store(where)
    if backend is None:
        from atomic_agent.turns.configured_backend import configured_backend

        backend = configured_backend(where.state_dir, where.config, where.host)
    return backend.open_store(where.state_dir)
