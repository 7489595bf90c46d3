"""Real MCP servers and a real Runtime with the mcp plugin, for the MCP tests.

`demo_server.py` (the SDK's MCPServer) runs as a subprocess over stdio, or over
streamable HTTP on a loopback port (`http_demo_server`). The runtime is the real one
with a ScriptedProvider standing in for the model.
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import atomic_agent.plugins.mcp as mcp_plugin
from atomic_agent.api import ScriptedProvider, boot_for_test, create_runtime, fresh_plugin_host

DEMO_SERVER = Path(__file__).with_name("demo_server.py")
NEVER_ANSWERS = Path(__file__).with_name("silent_server.py")


def stdio_server(name: str, *, trust: str | None = None, env: dict[str, str] | None = None,
                 script: Path = DEMO_SERVER, **extra: Any) -> dict[str, Any]:
    """A config.json server entry that runs `script` with this Python over stdio."""
    transport: dict[str, Any] = {"kind": "stdio", "command": sys.executable, "args": [str(script)]}
    if env:
        transport["env"] = env
    entry: dict[str, Any] = {"name": name, "transport": transport, **extra}
    if trust:
        entry["trust"] = trust
    return entry


def http_server(name: str, url: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "transport": {"kind": "streamable_http", "url": url}, **extra}


def write_config(state: Path, servers: list[dict[str, Any]], **mcp_extra: Any) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps({"mcp": {"servers": servers, **mcp_extra}}, indent=2))


def mcp_host() -> Any:
    host = fresh_plugin_host()
    host.register(mcp_plugin, "mcp")
    return host


async def mcp_runtime(state: Path, servers: list[dict[str, Any]], script: list[Any] | None = None, *,
                      ask: Any = None, provider: Any = None,
                      environ: dict[str, str] | None = None, **mcp_extra: Any) -> Any:
    write_config(state, servers, **mcp_extra)
    ctx = boot_for_test(state, plugins={"mcp": mcp_plugin})
    return await create_runtime(boot_context=ctx, provider=provider or ScriptedProvider(script or []), ask=ask,
                                environ=environ or {"PATH": "/usr/bin:/bin"})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def http_demo_server(env: dict[str, str] | None = None, port: int | None = None) -> Iterator[str]:
    """`demo_server.py` over streamable HTTP on `port` (default: a free loopback port); yields its /mcp URL."""
    import os

    port = port or free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO_SERVER), "--http", str(port)],
                            env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"demo server exited: {proc.stderr.read().decode()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("demo server did not listen within 30 s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
