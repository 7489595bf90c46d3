"""`atomic-agent doctor` lines for MCP: drifted tools waiting for approval (the fleet's, on
its database, when storage.url names one), and servers whose config cannot work (bad or
duplicate names, missing commands). Read-only: nothing is started, connected or written (the
fleet's drift table is not created: until a host records a catalog there, this says so)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from atomic_agent.plugins.mcp.drift_store import DriftStore
from atomic_agent.plugins.mcp.drift_table import DriftSchemaPending

CHECK = "mcp tool definitions"


def mcp_findings(state_dir: Path, plugin_host: Any = None, config: Any = None) -> list[Any]:
    """`plugin_host` and a loaded `config` find the fleet's database (see DriftStore.for_report)."""
    return [*_drift_findings(state_dir, plugin_host, config), *_config_findings(state_dir)]


def _drift_findings(state_dir: Path, plugin_host: Any, config: Any) -> list[Any]:
    from atomic_agent.api import DoctorFinding, SessionStoreError

    try:
        store = DriftStore.for_report(state_dir, config, plugin_host)
        drifted = store.drifted()
    except DriftSchemaPending as pending:
        return [DoctorFinding(CHECK, "ok", str(pending))]
    except SessionStoreError as exc:
        return [DoctorFinding(CHECK, "warn", f"the fleet's drift records could not be read: {exc}",
                              "the storage.postgresql check says what is wrong with the database")]
    return [DoctorFinding(
        check=f"mcp {server} tool definitions", level="warn",
        detail=f"{len(tools)} tool(s) new or changed since the catalog was approved, disabled until reviewed: "
               f"{', '.join(sorted(tools))}",
        advice=f"review with `atomic-agent mcp tools {server}`, then `atomic-agent mcp approve {server}`",
        path=store.kept.where) for server, tools in sorted(drifted.items())]


def _config_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import ConfigError, DoctorFinding, read_raw_config

    from .server_config import server_name_problem

    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return []  # the core's own config check reports it
    block = raw_block if isinstance(raw_block := raw.get("mcp"), dict) else {}
    servers = raw_servers if isinstance(raw_servers := block.get("servers"), list) else []
    findings = []
    seen: set[str] = set()
    for index, server in enumerate(servers):
        if not isinstance(server, dict):
            continue
        name = server.get("name")
        problem = server_name_problem(name) if isinstance(name, str) else "a server needs a name"
        if problem is None and name in seen:
            problem = f"duplicate server name {name!r}; only the first entry is used"
        transport = raw_transport if isinstance(raw_transport := server.get("transport"), dict) else {}
        command = transport.get("command")
        if problem is None and transport.get("kind", "stdio") == "stdio" and isinstance(command, str) and command \
                and shutil.which(command) is None and not Path(command).is_file():
            problem = f"stdio command {command!r} is not on PATH"
        if problem is not None:
            findings.append(DoctorFinding(check=f"mcp.servers[{index}]", level="warn", detail=problem,
                                          advice="fix it in config.json, or `atomic-agent mcp remove NAME`"))
        if isinstance(name, str):
            seen.add(name)
    return findings
