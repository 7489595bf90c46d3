"""Tool-definition drift: what the operator accepted of each server's catalog, and which
tools changed since.

A tool's fingerprint is a hash of its name, description, input schema and annotations
(a `readOnlyHint` that turns true would otherwise let a tool skip the approval gate
unseen). The first time a server's catalog is seen (the operator just added it) every
tool is accepted as it is. From then on a tool whose fingerprint differs from the accepted
one is *drifted*, and a tool the server adds later is *new*: either is held back (not
registered, so the model never sees its text) and reported by `mcp list`, `doctor` and an
event on sidecar/serve until `atomic-agent mcp approve SERVER [TOOL]` accepts the
definition the operator was shown. A server could otherwise swap a harmless description
for a prompt injection, or add a tool, after it was trusted. A tool it drops keeps its record.

Records written before annotations were fingerprinted (version 1) still match a tool whose
name, description and schema are unchanged, unless the tool now claims `readOnlyHint`:
that claim was never reviewed, so such a tool is held until approved.

Stored in `<state>/mcp/tool-fingerprints.json`, written atomically; on a fleet's PostgreSQL
database (the `shared_database` service) in its table `mcp_tool_approvals`, one row per
server, so an approval made on one host counts on every host. There every change is one
transaction under a fleet-wide advisory lock: two hosts approving (or judging a catalog) at
once apply one after the other, neither undoing the other.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_agent.plugins.mcp.mcp_records import ToolMeta

FILE_NAME = "tool-fingerprints.json"
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mcp.m001_tool_approvals", (
        "CREATE TABLE IF NOT EXISTS mcp_tool_approvals (server TEXT PRIMARY KEY, record JSONB NOT NULL)",)),
)
_EDIT_LOCK = "mcp.tool_approvals"  # the advisory lock every change of the records holds


def store_path(state_dir: Path) -> Path:
    return state_dir / "mcp" / FILE_NAME


def fingerprint(tool: ToolMeta) -> str:
    return _digest({"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema,
                    "annotations": {"readOnlyHint": tool.read_only_hint, "title": tool.title}})


def definition(tool: ToolMeta) -> dict[str, Any]:
    """What the operator reviews of a tool (and `mcp diff` compares): every fingerprinted field."""
    return {"name": tool.name, "title": tool.title, "description": tool.description,
            "readOnlyHint": tool.read_only_hint, "inputSchema": tool.input_schema}


def legacy_fingerprint(tool: ToolMeta) -> str:
    """The version-1 fingerprint (no annotations), to recognise records written before them."""
    return _digest({"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema})


def _digest(fields: dict[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class DriftStore:
    def __init__(self, state_dir: Path, shared: Any = None) -> None:
        """`shared`: the fleet's database (postgresql_contract.SharedDatabase), or None: the file."""
        self.path = store_path(state_dir)
        self._shared = shared
        if shared is not None:
            shared.ensure_schema("mcp", STEPS)

    @contextmanager
    def _editing(self) -> Iterator[dict[str, Any]]:
        """The records to change in place; written back (whole) only when they changed."""
        if self._shared is None:
            data = self._load()
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) != before:
                self._save(data)
            return
        with self._shared.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_EDIT_LOCK])
            rows = dict(conn.execute("SELECT server, record FROM mcp_tool_approvals").fetchall())
            # a copy: the rows as read stay to compare against
            data = {"version": 1, "servers": {k: json.loads(json.dumps(v)) for k, v in rows.items()
                                              if isinstance(v, dict)}}
            yield data
            from psycopg.types.json import Jsonb

            for server, record in data["servers"].items():
                if rows.get(server) != record:
                    conn.execute("INSERT INTO mcp_tool_approvals (server, record) VALUES (%s, %s) ON CONFLICT "
                                 "(server) DO UPDATE SET record = EXCLUDED.record", [server, Jsonb(record)])
            for server in set(rows) - set(data["servers"]):
                conn.execute("DELETE FROM mcp_tool_approvals WHERE server = %s", [server])

    # -- file ----------------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        if self._shared is not None:
            with self._shared.connection() as conn:
                rows = conn.execute("SELECT server, record FROM mcp_tool_approvals").fetchall()
            return {"version": 1, "servers": {k: v for k, v in rows if isinstance(v, dict)}}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"version": 1, "servers": {}}
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            return {"version": 1, "servers": {}}
        return data

    def _save(self, data: dict[str, Any]) -> None:
        from atomic_agent.api import write_atomic

        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def records(self) -> dict[str, dict[str, Any]]:
        """Every server's record, as kept (what `storage migrate` copies)."""
        return {k: v for k, v in self._load()["servers"].items() if isinstance(v, dict)}

    def write_file(self, records: dict[str, dict[str, Any]]) -> None:
        """The state dir's file afresh with `records` (`storage migrate --to sqlite`)."""
        self._save({"version": 1, "servers": records})

    # -- decisions -----------------------------------------------------------------------------
    def judge(self, server: str, tools: Sequence[ToolMeta]) -> tuple[list[ToolMeta], list[ToolMeta]]:
        """Split `tools` into (accepted, drifted), recording first sightings and new drift."""
        with self._editing() as data:
            return self._judge(data, server, tools)

    def _judge(self, data: dict[str, Any], server: str,
               tools: Sequence[ToolMeta]) -> tuple[list[ToolMeta], list[ToolMeta]]:
        record = data["servers"].get(server)
        first_sight = not isinstance(record, dict)
        if not isinstance(record, dict):
            record = {"approved": {}, "drifted": {}}
            data["servers"][server] = record
        approved: dict[str, str] = record.setdefault("approved", {})
        drifted: dict[str, Any] = record.setdefault("drifted", {})
        # the accepted definitions themselves, so a drifted tool can be shown old against new
        # (records written before they were kept have fingerprints only)
        definitions: dict[str, Any] = record.setdefault("definitions", {})
        accepted, held = [], []
        for tool in tools:
            current = fingerprint(tool)
            known = approved.get(tool.name)
            if known is None and first_sight:
                approved[tool.name] = current
                definitions[tool.name] = definition(tool)
                accepted.append(tool)
                continue
            if known is not None and known != current and known == legacy_fingerprint(tool) \
                    and tool.read_only_hint is not True:
                approved[tool.name] = known = current  # a version-1 record of the same definition
            if known == current:
                if tool.name in drifted:  # the server changed it back
                    del drifted[tool.name]
                if tool.name not in definitions:  # accepted before definitions were kept: it is this one
                    definitions[tool.name] = definition(tool)
                accepted.append(tool)
            else:
                held.append(tool)
                if drifted.get(tool.name, {}).get("fingerprint") != current:
                    drifted[tool.name] = {"fingerprint": current, "approved": known, "new": known is None,
                                          "seenAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                                          "description": tool.description[:200],
                                          "readOnlyHint": tool.read_only_hint}
        return accepted, held

    def approve(self, server: str, tools: Iterable[ToolMeta], only: str | None = None) -> list[str]:
        """Accept the current definitions (all, or the tool named `only`); returns the names accepted."""
        with self._editing() as data:
            record = data["servers"].setdefault(server, {"approved": {}, "drifted": {}})
            approved = record.setdefault("approved", {})
            drifted = record.setdefault("drifted", {})
            definitions = record.setdefault("definitions", {})
            names = []
            for tool in tools:
                if only is not None and tool.name != only:
                    continue
                approved[tool.name] = fingerprint(tool)
                definitions[tool.name] = definition(tool)
                drifted.pop(tool.name, None)
                names.append(tool.name)
        return names

    def forget(self, server: str) -> None:
        """Drop everything recorded for `server` (it was removed; adding it again is a fresh acceptance)."""
        with self._editing() as data:
            data["servers"].pop(server, None)

    def approved_definition(self, server: str, tool: str) -> dict[str, Any] | None:
        """The definition the operator last accepted for `tool` (None: never accepted, or
        accepted before definitions were kept)."""
        record = self._load()["servers"].get(server)
        found = (record.get("definitions") or {}).get(tool) if isinstance(record, dict) else None
        return dict(found) if isinstance(found, dict) else None

    def drifted(self) -> dict[str, dict[str, Any]]:
        """server -> tool -> drift record, for reports (read-only)."""
        return {name: dict(record.get("drifted") or {}) for name, record in self._load()["servers"].items()
                if isinstance(record, dict) and record.get("drifted")}
