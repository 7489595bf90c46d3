"""The approval records' backends side by side, for tests that must hold on both: the state
dir's approvals.sqlite and the fleet's PostgreSQL (the real server fixture). Each `open()` is
another process's view (SQLite: its own connection; PostgreSQL: its own backend and pool, as
another host has)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_records import ApprovalRecords
from atomic_agent.approval.approval_repository import ApprovalAudit, ApprovalRepository

BACKENDS = ("sqlite", pytest.param("postgresql", marks=pytest.mark.postgresql))


class ApprovalBackend:
    def __init__(self, name: str, tmp_path: Path, database: Any = None) -> None:
        self.name = name
        self.tmp_path = tmp_path
        self.database = database
        self._closers: list[Callable[[], None]] = []

    def open(self, clock: Callable[[], float] = time.time) -> ApprovalRepository:
        """Another process's records; `clock` is the host clock (SQLite's expiry reads it,
        PostgreSQL's reads the database's and ignores it)."""
        if self.name == "sqlite":
            records = ApprovalRecords(self.tmp_path / "a.sqlite", clock=clock)
            self._closers.append(records.close)
            return records
        backend = self._backend()
        return backend.approvals()  # type: ignore[no-any-return]

    def audit(self) -> ApprovalAudit:
        if self.name == "sqlite":
            return ApprovalAuditLog(self.tmp_path / "audit.ndjson")
        return self._backend().approval_audit()  # type: ignore[no-any-return]

    def execute(self, sql: str, params: list[Any]) -> list[Any]:
        """Look past the repository (SQLite placeholders; rewritten for PostgreSQL)."""
        if self.name == "sqlite":
            import sqlite3

            with sqlite3.connect(self.tmp_path / "a.sqlite") as conn:
                return conn.execute(sql, params).fetchall()
        from tests.plugins.postgresql.pg_kit import raw

        with raw(self.database) as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return cursor.fetchall() if cursor.description else []

    def _backend(self) -> Any:
        from tests.plugins.postgresql.pg_kit import backend_on

        backend = backend_on(self.database, pool_size=2)
        self._closers.append(backend.close)
        return backend

    def close(self) -> None:
        for close in reversed(self._closers):
            close()
