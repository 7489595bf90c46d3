"""`atomic-agent doctor` lines for MCP: drifted tools waiting for approval, and servers
whose config cannot work (bad or duplicate names, missing commands). Read-only: nothing
is started or connected here."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from atomic_agent.plugins.mcp.drift_store import DriftStore, store_path


def mcp_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import DoctorFinding

    findings = []
    for server, tools in sorted(DriftStore(state_dir).drifted().items()):
        findings.append(DoctorFinding(
            check=f"mcp {server} tool definitions", level="warn",
            detail=f"{len(tools)} tool(s) new or changed since the catalog was approved, disabled until reviewed: {', '.join(sorted(tools))}",
            advice=f"review with `atomic-agent mcp tools {server}`, then `atomic-agent mcp approve {server}`",
            path=str(store_path(state_dir))))
    findings.extend(_config_findings(state_dir))
    return findings


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
