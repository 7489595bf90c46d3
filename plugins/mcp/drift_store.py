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

Where the records are kept is a DriftRecords engine, chosen in `DriftStore.open` alone: the
state dir's file (drift_file), or, on a fleet, the table in its PostgreSQL database
(drift_table) so that an approval made on one host counts on every host. The decisions
below are the same on both. `doctor` and `status` open it read-only: nothing is written,
not even the fleet table's schema step.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from atomic_agent.plugins.mcp.mcp_records import ToolMeta

from .drift_file import DriftFile
from .drift_table import DriftTable


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


class DriftRecords(Protocol):
    """Where the drift records are kept: every server's record, and changes made whole."""

    where: str  # for messages: the file's path, or the table and its database

    def read(self) -> dict[str, dict[str, Any]]:
        """server -> record, as kept."""

    def editing(self) -> AbstractContextManager[dict[str, Any]]:
        """server -> record to change in place (a record added, changed or dropped), kept when
        the block ends; the engine's exclusion holds meanwhile."""


class DriftStore:
    def __init__(self, kept: DriftRecords) -> None:
        self.kept = kept

    @classmethod
    def open(cls, state_dir: Path, shared: Any = None, *, read_only: bool = False) -> DriftStore:
        """The records of `shared` (the fleet's database, postgresql_contract.SharedDatabase)
        when there is one, else the state dir's file. `read_only` (doctor, status): the fleet's
        table is read without writing anything, DriftSchemaPending when it is not there yet
        (the file is written by edits only, which those never make)."""
        if shared is None:
            return cls(DriftFile(state_dir))
        return cls(DriftTable.read_only(shared) if read_only else DriftTable.open(shared))

    @classmethod
    def for_report(cls, state_dir: Path, config: Any, plugin_host: Any) -> DriftStore:
        """The records as `doctor` and `status` read them, read-only: the fleet's when storage.url
        names a database (the `shared_database` service as a command without a runtime builds
        it), else the state file (also when config.json does not load: the core reports that).
        Raises DriftSchemaPending, or SessionStoreError when the database cannot be used."""
        from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

        shared = None if plugin_host is None or config is None else \
            plugin_host.command_service(state_dir, config, SHARED_DATABASE_SERVICE)
        return cls.open(state_dir, shared, read_only=True)

    # -- decisions -----------------------------------------------------------------------------
    def judge(self, server: str, tools: Sequence[ToolMeta]) -> tuple[list[ToolMeta], list[ToolMeta]]:
        """Split `tools` into (accepted, drifted), recording first sightings and new drift."""
        with self.kept.editing() as servers:
            return self._judge(servers, server, tools)

    def _judge(self, servers: dict[str, Any], server: str,
               tools: Sequence[ToolMeta]) -> tuple[list[ToolMeta], list[ToolMeta]]:
        record = servers.get(server)
        first_sight = not isinstance(record, dict)
        if not isinstance(record, dict):
            record = {"approved": {}, "drifted": {}}
            servers[server] = record
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
        with self.kept.editing() as servers:
            record = servers.setdefault(server, {"approved": {}, "drifted": {}})
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
        with self.kept.editing() as servers:
            servers.pop(server, None)

    def approved_definition(self, server: str, tool: str) -> dict[str, Any] | None:
        """The definition the operator last accepted for `tool` (None: never accepted, or
        accepted before definitions were kept)."""
        record = self.kept.read().get(server)
        found = (record.get("definitions") or {}).get(tool) if isinstance(record, dict) else None
        return dict(found) if isinstance(found, dict) else None

    def drifted(self) -> dict[str, dict[str, Any]]:
        """server -> tool -> drift record, for reports (read-only)."""
        return {name: dict(record.get("drifted") or {}) for name, record in self.kept.read().items()
                if record.get("drifted")}
