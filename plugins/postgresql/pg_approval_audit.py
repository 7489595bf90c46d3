"""The approval audit in the fleet's PostgreSQL database (`approval_audit`, schema step
m005_approvals): one row per approval decision of any host, in place of the embedded
`audit/approvals.ndjson`.

The table is append-only in the database itself (triggers refuse UPDATE, DELETE and
TRUNCATE), its ids come from an identity and are never reused, and each row's time is the
database's clock, so the fleet's decisions read in one order whatever the hosts' clocks say.
An entry is the same JSON object the file keeps (the core's `audit_entry`), its `ts` the row's.
"""

from __future__ import annotations

import json
from typing import Any

from .shared_database import SharedDatabase


class PgApprovalAudit:
    def __init__(self, database: SharedDatabase, kit: Any) -> None:
        self.db = database
        self.kit = kit

    def append(self, **fields: Any) -> None:
        """Commit one decision (synchronously: it is on disk before the decision takes effect)."""
        entry = json.dumps(self.kit.audit_entry(fields), ensure_ascii=False, default=str)
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO approval_audit (entry) VALUES (%s)", [entry])

    def read(self) -> list[dict[str, Any]]:
        """Every decision, oldest first, each with its `ts` (ISO 8601, UTC, milliseconds)."""
        with self.db.connection() as conn:
            rows = conn.execute("SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+00:00\"'), "
                                "entry FROM approval_audit ORDER BY audit_id").fetchall()
        return [{"ts": ts, **json.loads(entry)} for ts, entry in rows]
