"""MCP client numbers: connect time per server, the tools/call round-trip overhead the
plugin adds over calling the SDK directly (median), and the stable-prefix growth per MCP
tool in tokens.

Usage: .venv/bin/python benchmarks/mcp_client.py [--servers 3] [--calls 200] [--llama-url URL]
The servers are the SDK-written demo server of the tests over stdio. With --llama-url
the prefix growth is counted with the server's /tokenize; otherwise it is estimated.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.mcp.pasted_config import parse_pasted_servers
from atomic_agent.plugins.mcp.server_manager import McpManager
from atomic_agent.prompt.build_prompt import estimate_tokens
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
from atomic_agent.prompt.prompt_assets import make_prompt_env
from atomic_agent.tools.builtin_tools import builtin_tool_specs
from atomic_agent.tools.tool_registry import ToolRegistry

DEMO = Path(__file__).resolve().parent.parent / "tests" / "plugins" / "mcp" / "demo_server.py"


def _server(name: str):
    import json

    return parse_pasted_servers(json.dumps({"name": name, "command": sys.executable, "args": [str(DEMO)],
                                            "trust": "pure_read"}))[0]


async def _direct_sdk_calls(calls: int) -> list[float]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    times = []
    async with stdio_client(StdioServerParameters(command=sys.executable, args=[str(DEMO)])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for _ in range(calls):
                started = time.perf_counter()
                await session.call_tool("add", {"a": 1, "b": 2})
                times.append((time.perf_counter() - started) * 1000)
    return times


async def _count_tokens(text: str, llama_url: str | None) -> int:
    if not llama_url:
        return estimate_tokens(text)
    import httpx

    async with httpx.AsyncClient(timeout=60) as client:
        response = await client.post(f"{llama_url.rstrip('/')}/tokenize", json={"content": text})
        return len(response.json()["tokens"])


async def main(servers: int, calls: int, llama_url: str | None) -> None:
    state = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    registry = ToolRegistry(builtin_tool_specs())
    manager = McpManager(registry=registry, state_dir=state, environ=None)
    env = make_prompt_env([])
    base_prefix = build_stable_prefix(env, registry, default_capabilities(state))
    print(f"connect time per server (stdio, SDK demo server, {servers} servers, one at a time):")
    for index in range(servers):
        started = time.perf_counter()
        status = await manager.add_live(_server(f"demo-{index}"))
        print(f"  demo-{index}: {(time.perf_counter() - started) * 1000:.0f} ms ({status.status}, "
              f"{len(status.tools)} tools)")
    try:
        spec = registry.get("mcp.demo-0.add")
        ctx = make_tool_context(state)
        plugin_times = []
        for _ in range(calls):
            started = time.perf_counter()
            await spec.run({"a": 1, "b": 2}, ctx)
            plugin_times.append((time.perf_counter() - started) * 1000)
        direct_times = await _direct_sdk_calls(calls)
        plugin_median, direct_median = statistics.median(plugin_times), statistics.median(direct_times)
        print(f"tools/call round trip, median of {calls}: plugin {plugin_median:.3f} ms, SDK direct "
              f"{direct_median:.3f} ms, overhead {plugin_median - direct_median:+.3f} ms")
        mcp_tools = [n for n in registry.names() if n.startswith("mcp.demo-")]
        with_mcp = build_stable_prefix(env, registry, default_capabilities(state))
        grown = await _count_tokens(with_mcp, llama_url) - await _count_tokens(base_prefix, llama_url)
        how = "tokenized by llama-server" if llama_url else "estimated"
        print(f"stable prefix growth: {grown} tokens for {len(mcp_tools)} MCP tools "
              f"(+4 aggregate tools) = {grown / max(len(mcp_tools), 1):.1f} tokens per tool ({how})")
    finally:
        await manager.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--servers", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--llama-url", default=None)
    args = parser.parse_args()
    asyncio.run(main(args.servers, args.calls, args.llama_url))
