"""What `storage migrate` copies of the MCP drift approvals (postgresql_contract's
SHARED_STATE_SERVICE): the state dir's mcp/tool-fingerprints.json, one record per server,
kept as mcp_tool_approvals (step mcp.m001_tool_approvals; the record as jsonb)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .drift_file import FILE_NAME
from .drift_table import STEPS, TABLE


@attrs.frozen
class DriftState:
    owner: str = "mcp"
    schema_steps: Sequence[tuple[str, Sequence[str]]] = STEPS
    path: str = f"mcp/{FILE_NAME}"
    table: str = TABLE
    columns: Sequence[str] = ("server", "record")
    key: str = "server"
    identity: str = ""
    forms: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)

    def read_rows(self, state_dir: Path) -> list[tuple[Any, ...]]:
        from .drift_file import DriftFile

        return sorted(DriftFile(state_dir).read().items())

    def write_rows(self, state_dir: Path, rows: Sequence[tuple[Any, ...]]) -> None:
        from .drift_file import DriftFile

        DriftFile(state_dir).replace({server: record for server, record in rows})
