"""The MCP drift records of a fleet: table `mcp_tool_approvals` in its PostgreSQL database
(the `shared_database` service), one row per server with its record as jsonb, so an approval
made on one host counts on every host. Every change is one transaction under a fleet-wide
advisory lock: two hosts approving (or judging a catalog) at once apply one after the other,
neither undoing the other. One engine of drift_store's DriftRecords (a host's own is
drift_file).

`open` applies the table's schema step (a runtime, an `mcp` command); `read_only` writes
nothing, not even that step, and says so (DriftSchemaPending) when the step is not applied
yet: then no host of the fleet has recorded a catalog (`doctor`, `status`)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

OWNER = "mcp"
TABLE = "mcp_tool_approvals"
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mcp.m001_tool_approvals", (
        f"CREATE TABLE IF NOT EXISTS {TABLE} (server TEXT PRIMARY KEY, record JSONB NOT NULL)",)),
)
_EDIT_LOCK = "mcp.tool_approvals"  # the advisory lock every change of the records holds


class DriftSchemaPending(Exception):
    """The fleet's database has no drift table yet (read-only opens never create it)."""

    def __init__(self, shown: str, steps: tuple[str, ...]) -> None:
        super().__init__(f"{shown} holds no MCP drift records yet: schema step(s) {', '.join(steps)} not applied "
                         "(no host of the fleet has recorded a server's catalog); the first host to connect an MCP "
                         "server (a runtime start, or an `atomic-agent mcp` command) applies it")
        self.shown = shown
        self.steps = steps


class DriftTable:
    def __init__(self, shown: str, reads: Callable[[], AbstractContextManager[Any]],
                 edits: Callable[[], AbstractContextManager[Any]]) -> None:
        self.where = f"{TABLE} on {shown}"
        self._reads = reads  # a connection to read with
        self._edits = edits  # a connection inside one transaction, to change the records with

    @classmethod
    def open(cls, shared: Any) -> DriftTable:
        """On `shared` (postgresql_contract.SharedDatabase), this build's schema applied first."""
        shared.ensure_schema(OWNER, STEPS)
        return cls(shared.shown, shared.connection, shared.transaction)

    @classmethod
    def read_only(cls, shared: Any) -> DriftTable:
        """On `shared`, every read and edit in a READ ONLY transaction of its own (an edit is
        refused by the database); DriftSchemaPending when the table is not there yet."""
        pending = shared.pending_steps(OWNER, STEPS)
        if pending:
            raise DriftSchemaPending(shared.shown, tuple(pending))
        return cls(shared.shown, shared.read_only, shared.read_only)

    def read(self) -> dict[str, dict[str, Any]]:
        with self._reads() as conn:
            rows = conn.execute(f"SELECT server, record FROM {TABLE}").fetchall()
        return {k: v for k, v in rows if isinstance(v, dict)}

    @contextmanager
    def editing(self) -> Iterator[dict[str, Any]]:
        with self._edits() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_EDIT_LOCK])
            rows = dict(conn.execute(f"SELECT server, record FROM {TABLE}").fetchall())
            # a copy: the rows as read stay to compare against, so only changed records are written
            servers = {k: copy.deepcopy(v) for k, v in rows.items() if isinstance(v, dict)}
            yield servers
            for server, record in servers.items():
                if rows.get(server) != record:
                    conn.execute(f"INSERT INTO {TABLE} (server, record) VALUES (%s, %s::jsonb) ON CONFLICT "
                                 "(server) DO UPDATE SET record = EXCLUDED.record", [server, json.dumps(record)])
            for server in set(rows) - set(servers):
                conn.execute(f"DELETE FROM {TABLE} WHERE server = %s", [server])
