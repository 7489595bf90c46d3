"""Write `mcp.servers[]` changes to config.json (validated by the config loader) before
anything connects or disconnects, so what runs is always what a restart would run."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.mcp.pasted_config import server_to_raw
from atomic_agent.plugins.mcp.server_config import MCP_BLOCK, ServerConfig


class DuplicateServerError(ValueError):
    """A server with this name is already configured."""

    code = "mcp_server_exists"  # what hosts answer with (serve: 409)


@attrs.frozen
class ConfigPersistence:
    path: Path
    config_blocks: Mapping[str, Any]

    def _servers(self, raw: dict[str, Any]) -> list[Any]:
        block = raw.setdefault(MCP_BLOCK, {})
        if not isinstance(block, dict):
            raise ValueError(f"config.json: {MCP_BLOCK} must be an object")
        servers = block.setdefault("servers", [])
        if not isinstance(servers, list):
            raise ValueError(f"config.json: {MCP_BLOCK}.servers must be a list")
        return servers

    def configured_names(self) -> list[str]:
        from atomic_agent.api import read_raw_config

        raw = read_raw_config(self.path)
        return [s["name"] for s in self._servers(raw) if isinstance(s, dict) and isinstance(s.get("name"), str)]

    def add(self, server: ServerConfig, replace: bool = False) -> None:
        from atomic_agent.api import config_file, read_raw_config

        raw = read_raw_config(self.path)
        servers = self._servers(raw)
        existing = [i for i, s in enumerate(servers) if isinstance(s, dict) and s.get("name") == server.name]
        if existing and not replace:
            raise DuplicateServerError(f"an MCP server named {server.name!r} is already configured; remove it first "
                                       "or pass --replace")
        for index in reversed(existing):
            del servers[index]
        servers.append(server_to_raw(server))
        config_file.save_raw_config(self.path, raw, self.config_blocks)

    def remove(self, name: str) -> bool:
        from atomic_agent.api import config_file, read_raw_config

        raw = read_raw_config(self.path)
        servers = self._servers(raw)
        kept = [s for s in servers if not (isinstance(s, dict) and s.get("name") == name)]
        if len(kept) == len(servers):
            return False
        raw[MCP_BLOCK]["servers"] = kept
        config_file.save_raw_config(self.path, raw, self.config_blocks)
        return True
