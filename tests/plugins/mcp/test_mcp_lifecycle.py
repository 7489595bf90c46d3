"""Lifecycle: connect at start (each server isolated), tools registered at tier frequent in
a deterministic order, grammar and prompt built from the registered names, aggregate tools
registered once, shutdown closes every client before the provider."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.api import ScriptedProvider, Tier
from tests.plugins.mcp.mcp_kit import NEVER_ANSWERS, mcp_runtime, stdio_server

AGGREGATES = ["mcp.prompt.get", "mcp.prompt.list", "mcp.resource.list", "mcp.resource.read"]


async def test_start_isolates_per_server_failures_and_scrubs_last_error(tmp_path: Path) -> None:
    servers = [
        stdio_server("good"),
        {"name": "no-such-command", "transport": {"kind": "stdio", "command": "/nonexistent/mcp-server-xyz"}},
        stdio_server("silent", script=NEVER_ANSWERS, connectTimeoutS=2),
        {"name": "metadata", "transport": {"kind": "streamable_http",
                                           "url": "http://admin:hunter2secret@169.254.169.254/mcp"}},
    ]
    runtime = await mcp_runtime(tmp_path / "state", servers)
    try:
        by_name = {s.name: s for s in runtime.service("mcp").statuses()}
        assert by_name["good"].status == "up" and "mcp.good.echo" in runtime.registry
        assert by_name["no-such-command"].status == "down" and "No such file" in by_name["no-such-command"].last_error
        assert by_name["silent"].status == "down" and "handshake within 2 s" in by_name["silent"].last_error
        assert by_name["metadata"].status == "down" and "metadata" in by_name["metadata"].last_error
        assert "hunter2secret" not in json.dumps([s.to_json() for s in by_name.values()])
        assert not [n for n in runtime.registry.names() if n.startswith(("mcp.silent.", "mcp.no-such-command."))]
    finally:
        await runtime.close()


async def test_tools_are_tier_frequent_with_the_servers_full_schema(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo")])
    try:
        spec = runtime.registry.get("mcp.demo.add")
        assert spec.tier is Tier.FREQUENT and spec.summary == "[mcp:demo] Add two integers."
        assert spec.args_schema["properties"]["a"]["type"] == "integer" and spec.args_schema["required"] == ["a", "b"]
        prefix = (await runtime.prompt_plan()).stable_prefix_for(tmp_path)
        # the full signature, and the summary to its first clause (the stable prefix's form)
        assert "mcp.demo.add(a: integer, b: integer) — [mcp:demo] Add two integers\n" in prefix
    finally:
        await runtime.close()


async def test_mcp_tools_are_sorted_by_server_then_tool_and_the_prefix_is_byte_stable(tmp_path: Path) -> None:
    servers = [stdio_server("zeta"), stdio_server("alpha")]
    prefixes = []
    for attempt in range(2):
        runtime = await mcp_runtime(tmp_path / f"state{attempt}", list(reversed(servers)) if attempt else servers)
        try:
            names = [n for n in runtime.registry.names() if n.startswith("mcp.") and n not in AGGREGATES]
            assert names == sorted(names, key=lambda n: tuple(n.split(".", 2)[1:]))
            assert names[0].startswith("mcp.alpha.") and names[-1].startswith("mcp.zeta.")
            prefixes.append((await runtime.prompt_plan()).stable_prefix_for(tmp_path))
        finally:
            await runtime.close()
    assert prefixes[0] == prefixes[1]


async def test_grammar_tool_name_alternation_is_built_from_the_registered_names(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo", include=["echo", "add"])])
    try:
        grammar = (await runtime.prompt_plan()).grammar
        line = "\n".join(ln for ln in grammar.splitlines()
                          if ln.startswith(("step-tool-name ::= ", "lone-tool-name ::= ")))  # gated tools run alone
        assert '"\\"mcp.demo.echo\\""' in line and '"\\"mcp.demo.add\\""' in line
        assert "write_note" not in line  # excluded by the include glob: neither prompt nor grammar
    finally:
        await runtime.close()


async def test_aggregate_tools_are_registered_once_and_dispatch_by_server(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("one"), stdio_server("two")])
    try:
        assert [n for n in runtime.registry.names() if n in AGGREGATES] == AGGREGATES
        from atomic_agent.api import make_tool_context

        ctx = make_tool_context(tmp_path)
        listed = await runtime.registry.get("mcp.resource.list").run({}, ctx)
        assert listed.summary.splitlines() == ["one memo://readme — readme: A small memo.",
                                               "two memo://readme — readme: A small memo."]
        read = await runtime.registry.get("mcp.resource.read").run({"server": "two", "uri": "memo://readme"}, ctx)
        assert read.status == "ok" and read.summary == "the memo text"
        prompt = await runtime.registry.get("mcp.prompt.get").run(
            {"server": "one", "name": "greet", "arguments": {"name": "Ada"}}, ctx)
        assert prompt.summary == "[user] Say hello to Ada."
        unknown = await runtime.registry.get("mcp.prompt.list").run({"server": "three"}, ctx)
        assert unknown.status == "error" and "no MCP server named 'three'" in unknown.summary
    finally:
        await runtime.close()


async def test_zero_servers_is_a_no_op_that_leaves_the_prompt_unchanged(tmp_path: Path) -> None:
    from atomic_agent.api import create_runtime, fresh_plugin_host
    from atomic_agent.runtime.boot_context import boot

    with_mcp = await mcp_runtime(tmp_path / "a", [])
    without = await create_runtime(boot_context=boot(tmp_path / "b", environ={}, host=fresh_plugin_host()),
                                   provider=ScriptedProvider([]))
    try:
        assert with_mcp.service("mcp").statuses() == []
        assert with_mcp.registry.names() == without.registry.names()
        assert (await with_mcp.prompt_plan()).stable_prefix_for(tmp_path) == \
            (await without.prompt_plan()).stable_prefix_for(tmp_path)
    finally:
        await with_mcp.close()
        await without.close()


class _ClosingProvider(ScriptedProvider):
    def __init__(self, manager_ref: list) -> None:
        super().__init__([])
        self.manager_ref = manager_ref
        self.open_connections_at_close: int | None = None

    async def close(self) -> None:
        manager = self.manager_ref[0]
        self.open_connections_at_close = sum(
            1 for name in manager.names() if manager._entries[name].connection is not None)
        await super().close()


async def test_shutdown_closes_every_client_before_the_provider_is_torn_down(tmp_path: Path) -> None:
    ref: list = []
    provider = _ClosingProvider(ref)
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("a"), stdio_server("b")], provider=provider)
    manager = runtime.service("mcp")
    ref.append(manager)
    connections = [manager._entries[n].connection for n in manager.names()]
    assert all(c is not None and not c.closed.is_set() for c in connections)
    await runtime.close()
    assert provider.open_connections_at_close == 0
    assert all(c.closed.is_set() for c in connections)
    assert not [n for n in runtime.registry.names() if n.startswith("mcp.")]
