"""What `storage migrate` copies of the MCP drift approvals (postgresql_contract's
SHARED_STATE_SERVICE): the state dir's mcp/tool-fingerprints.json, one record per server,
kept as mcp_tool_approvals (step mcp.m001_tool_approvals; the record as jsonb)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .drift_store import FILE_NAME, STEPS


@attrs.frozen
class DriftState:
    owner: str = "mcp"
    schema_steps: Sequence[tuple[str, Sequence[str]]] = STEPS
    path: str = f"mcp/{FILE_NAME}"
    table: str = "mcp_tool_approvals"
    columns: Sequence[str] = ("server", "record")
    key: str = "server"
    identity: str = ""
    forms: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)

    def read_rows(self, state_dir: Path) -> list[tuple[Any, ...]]:
        from .drift_store import DriftStore

        return sorted(DriftStore(state_dir).records().items())

    def write_rows(self, state_dir: Path, rows: Sequence[tuple[Any, ...]]) -> None:
        from .drift_store import DriftStore

        DriftStore(state_dir).write_file({server: record for server, record in rows})
