"""Where a running `serve` of this state dir listens, and how a command on the same machine
talks to it (`status`, `webhook test`).

serve writes `<state>/serve/listening.json` (pid and base URL, mode 0600) once it is about to
accept connections and removes it when it stops; a file whose pid is gone (a killed serve)
counts as no serve. A command reaches it with the same credentials a client would use:
serve's API key (the `serve.apiKeyEnv` variable, else the generated key file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.serve.client_identity import TOKEN_DIR, api_key_path

ADDRESS_FILE = "listening.json"


def address_path(state_dir: Path) -> Path:
    return state_dir / TOKEN_DIR / ADDRESS_FILE


def record_address(state_dir: Path, url: str) -> None:
    from atomic_agent.api import write_atomic

    path = address_path(state_dir)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"pid": os.getpid(), "url": url}) + "\n")


def clear_address(state_dir: Path) -> None:
    """Remove the file if it is this process's (a second serve that failed to bind leaves the
    first one's file alone)."""
    path = address_path(state_dir)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process holds the pid: not ours to judge, report it
    return True


@attrs.frozen
class LocalServe:
    pid: int
    url: str
    api_key: str | None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def get(self, path: str, timeout_s: float = 2.0) -> Any:
        """GET `path` as JSON (raises httpx errors and HTTPStatusError)."""
        import httpx

        response = httpx.get(self.url + path, headers=self.headers, timeout=timeout_s)
        response.raise_for_status()
        return response.json()


def running_serve(state_dir: Path, config: Any = None) -> LocalServe | None:
    """The serve of this state dir that is alive now, or None."""
    try:
        raw = json.loads(address_path(state_dir).read_text(encoding="utf-8"))
        pid, url = int(raw["pid"]), str(raw["url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not _alive(pid):
        return None
    return LocalServe(pid, url.rstrip("/"), _api_key(state_dir, config))


def _api_key(state_dir: Path, config: Any) -> str | None:
    from atomic_agent.plugins.serve.serve_config import SERVE_BLOCK

    block = config.blocks.get(SERVE_BLOCK) if config is not None else None
    env_name = block.api_key_env if block is not None else "ATOMIC_AGENT_API_KEY"
    if os.environ.get(env_name):
        return os.environ[env_name]
    try:
        return api_key_path(state_dir).read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def status_lines(state_dir: Path, config: Any) -> list[dict[str, Any]]:
    """serve's lines of `atomic-agent status`: whether it runs and the MCP servers as that host
    has them connected (up/down). Pending approvals are durable records every surface shares:
    the core's line reports them, whichever host asked."""
    serve = running_serve(state_dir, config)
    if serve is None:
        return [{"section": "hosts", "name": "serve", "state": "off", "summary": "not running",
                 "detail": {"running": False}}]
    lines: list[dict[str, Any]] = [{"section": "hosts", "name": "serve", "state": "ok",
                                    "summary": f"listening at {serve.url} (pid {serve.pid})",
                                    "detail": {"running": True, "pid": serve.pid, "url": serve.url}}]
    try:
        servers = serve.get("/api/mcp/servers").get("data", [])
    except Exception:
        servers = []  # serve without MCP answers 404: the mcp plugin's own lines still show
    for server in servers:
        up = server.get("status") == "up"
        lines.append({"section": "channels", "name": f"mcp {server.get('name')}", "state": "ok" if up else "error",
                      "summary": f"{server.get('status')} in serve, {len(server.get('tools') or [])} tool(s)"
                                 + (f": {server.get('lastError')}" if server.get("lastError") else ""),
                      "problems": [f"mcp {server.get('name')}: {len(server.get('drifted') or [])} tool(s) changed "
                                   f"since approval; review with `atomic-agent mcp diff {server.get('name')}`"]
                                  if server.get("drifted") else [],
                      "detail": server})
    return lines
