"""The core's own shared state as `storage migrate` copies it (postgresql_contract's
SHARED_STATE_SERVICE, declared here because this plugin keeps the core's tables):
sessions.sqlite (sessions, transcripts, the turn ledger and its audit, steers, idempotency
keys), approvals.sqlite (approval and question records) and the approval audit
`audit/approvals.ndjson` (one JSON object per line; `approval_audit` in the database)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

# the database keeps the time of an audit line as a timestamptz, the file as ISO 8601 text
# with milliseconds in UTC (approval_gate.ApprovalAuditLog); read back the file's way
_AUDIT_AT = ("to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+00:00\"')", "%s::timestamptz")


@attrs.frozen
class SessionsState:
    owner: str = ""
    schema_steps: Sequence[tuple[str, Sequence[str]]] = ()  # the core's steps: migrated first, always
    path: str = "sessions.sqlite"
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (
        ("sessions", "sessions", ("id",), ""),
        ("transcript", "transcript", ("session_id", "seq"), ""),
        ("turns", "turns", ("turn_id",), ""),
        ("turn_audit", "turn_audit", ("audit_id",), "audit_id"),
        ("steer_queue", "steer_queue", ("steer_id",), "steer_id"),
        ("idempotency_keys", "idempotency_keys", ("key",), ""),
    )
    forms: Mapping[str, tuple[str, str, str, str]] = attrs.field(factory=dict)

    @contextlib.contextmanager
    def open_sqlite(self, state_dir: Path) -> Iterator[Any]:
        from atomic_agent.api import open_session_store

        store = open_session_store(state_dir)  # the embedded store, at this build's schema
        try:
            yield store.conn  # type: ignore[attr-defined]
        finally:
            store.close()


@attrs.frozen
class ApprovalsState:
    kit: Any  # the core's session_backend_kit (its approval_records opens the file)
    owner: str = ""
    schema_steps: Sequence[tuple[str, Sequence[str]]] = ()
    path: str = "approvals.sqlite"
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (("approval_records", "approval_records", ("id",), ""),)
    forms: Mapping[str, tuple[str, str, str, str]] = attrs.field(factory=dict)

    @contextlib.contextmanager
    def open_sqlite(self, state_dir: Path) -> Iterator[Any]:
        records = self.kit.approval_records.ApprovalRecords.for_state_dir(state_dir)
        try:
            yield records.conn
        finally:
            records.close()


@attrs.frozen
class ApprovalAuditState:
    owner: str = ""
    schema_steps: Sequence[tuple[str, Sequence[str]]] = ()
    path: str = "audit/approvals.ndjson"
    table: str = "approval_audit"
    columns: Sequence[str] = ("at", "entry")
    key: str = "audit_id"
    identity: str = "audit_id"
    forms: Mapping[str, tuple[str, str]] = attrs.field(factory=lambda: {"at": _AUDIT_AT})

    def read_rows(self, state_dir: Path) -> list[tuple[Any, ...]]:
        """(time, the entry without it) per line, as PgApprovalAudit keeps them; a torn last
        line of a crash is skipped, as the file's reader does."""
        try:
            lines = (state_dir / self.path).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        rows = []
        for line in lines:
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            ts = entry.pop("ts", None)
            rows.append((ts, json.dumps(entry, ensure_ascii=False, default=str)))
        return rows

    def write_rows(self, state_dir: Path, rows: Sequence[tuple[Any, ...]]) -> None:
        path = state_dir / self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps({"ts": ts, **json.loads(entry)}, ensure_ascii=False) + "\n" for ts, entry in rows)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # the audit's mode (it held no line)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)


def core_shared_state(kit: Any) -> list[Any]:
    return [SessionsState(), ApprovalsState(kit), ApprovalAuditState()]
