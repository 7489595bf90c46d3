"""A connect whose own task is cancelled (a host shutting down, a close cancelling a
reconnect) leaves no stdio server running: neither mid-handshake nor while the catalog is
being fetched, when the connection is not yet in any entry that a close would reach."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from atomic_agent.plugins.mcp.sdk_connection import SdkConnection
from atomic_agent.plugins.mcp.server_config import STDIO, ServerConfig, TransportConfig
from tests.plugins.mcp.mcp_kit import mcp_runtime
from tests.process_liveness import alive, gone_soon_async

# a stdio server that writes its pid, answers the handshake only when told to, and never
# answers tools/list (it writes a marker when asked, so the test knows the catalog is underway)
HANGING_SERVER = """
import json, os, sys
folder, answers_handshake = sys.argv[1], sys.argv[2] == "handshake"
open(os.path.join(folder, "pid"), "w").write(str(os.getpid()))
for line in sys.stdin:
    request = json.loads(line)
    if request.get("method") == "initialize" and answers_handshake:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "hanging", "version": "0"}}}) + "\\n")
        sys.stdout.flush()
    elif request.get("method") == "tools/list":
        open(os.path.join(folder, "listing"), "w").write("asked")
"""


def _server(tmp_path: Path, mode: str) -> ServerConfig:
    script = tmp_path / "hanging_server.py"
    script.write_text(HANGING_SERVER)
    return ServerConfig("hanging", TransportConfig(STDIO, sys.executable, (str(script), str(tmp_path), mode)),
                        connect_timeout_s=60, call_timeout_s=60, reconnect_attempts=1)


async def _until_file(path: Path) -> None:
    for _ in range(3000):  # a hung-test limit of 30 s
        if path.exists() and path.read_text():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path.name} never appeared")


async def test_an_open_whose_task_is_cancelled_mid_handshake_leaves_no_server_running(tmp_path: Path) -> None:
    connection = SdkConnection(_server(tmp_path, "silent"), {"PATH": "/usr/bin:/bin"}, on_sampling=None)
    opening = asyncio.ensure_future(connection.open())
    await _until_file(tmp_path / "pid")
    pid = int((tmp_path / "pid").read_text())
    opening.cancel()  # the caller's own task, not a timeout
    await asyncio.gather(opening, return_exceptions=True)
    assert opening.cancelled()
    assert connection.closed.is_set()  # its owner task ended with it
    assert await gone_soon_async(pid)


async def test_a_connect_whose_task_is_cancelled_during_the_catalog_leaves_no_server_running(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    try:
        manager = runtime.service("mcp")
        adding = asyncio.ensure_future(manager.add_live(_server(tmp_path, "handshake")))
        await _until_file(tmp_path / "listing")  # connected, and the catalog is being fetched
        pid = int((tmp_path / "pid").read_text())
        adding.cancel()
        await asyncio.gather(adding, return_exceptions=True)
        assert adding.cancelled()
        assert await gone_soon_async(pid)
    finally:
        await runtime.close()


async def test_a_close_during_a_reconnect_leaves_no_server_running_once_it_returns(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    try:
        manager = runtime.service("mcp")
        manager.reconnect_base_s = 0.01
        server = _server(tmp_path, "handshake")
        entry = manager._new_entry(server)
        manager._entries[server.name] = entry
        entry.status = "down"  # as a lost connection leaves it
        assert manager._schedule_reconnect(entry)
        await _until_file(tmp_path / "listing")  # the reconnect is fetching the catalog
        pid = int((tmp_path / "pid").read_text())
        await manager.close()
        assert not alive(pid)  # not some time after close returned
    finally:
        await runtime.close()
