"""`atomic-agent mcp list|tools|resources|prompts|diff|add|remove|enable|disable|approve|call`.

`add` and `remove` write config.json first; `add` then connects once, which is the
operator accepting the server's catalog (its tool fingerprints are recorded). `list`,
`tools`, `approve` and `call` boot a runtime, so they see exactly what a turn would:
the same connections, the same drift check and, for `call`, the same approval gate.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import typer

from atomic_agent.api import current_cli_state, fail

from .mcp_contract import MCP_SERVICE

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

mcp_app = typer.Typer(no_args_is_help=True, add_completion=False)
T = TypeVar("T")
APPROVE_MODES = ("never", "once")


def _with_manager(ctx: typer.Context, work: Callable[[Any, Any], Awaitable[T]], ask: Any = None) -> T:
    import asyncio

    from atomic_agent.api import create_runtime

    boot = current_cli_state(ctx).require()

    async def go() -> T:
        runtime = await create_runtime(boot_context=boot, ask=ask)
        try:
            return await work(runtime, runtime.service(MCP_SERVICE))
        finally:
            await runtime.close()

    return asyncio.run(go())


def _status_line(status: Any) -> list[str]:
    state = status.status + (f" ({status.last_error})" if status.last_error else "")
    return [status.name, status.transport, status.trust, state, str(len(status.tools)),
            ", ".join(status.drifted) or "-"]


@mcp_app.command("list")
def list_command(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Every configured server: transport, trust, status, tool count and drifted tools."""
    from atomic_agent.api import print_json, print_table

    async def work(runtime: RuntimeView, manager: Any) -> list[Any]:
        return manager.statuses()

    statuses = _with_manager(ctx, work)
    if json_out:
        print_json([s.to_json() for s in statuses])
        return
    if not statuses:
        print("no MCP servers configured; add one with `atomic-agent mcp add JSON`")
        return
    print_table(["name", "transport", "trust", "status", "tools", "drifted"], [_status_line(s) for s in statuses])
    for status in statuses:
        if status.drifted:
            print(f"{status.name}: {len(status.drifted)} tool(s) new or changed since approval are disabled; review, then "
                  f"`atomic-agent mcp approve {status.name}`", file=sys.stderr)


@mcp_app.command("tools")
def tools_command(ctx: typer.Context, name: str = typer.Argument(..., help="Server name."),
                  json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """One server's tools as the model sees them, plus the drifted and dropped ones."""
    from atomic_agent.api import print_json, print_table

    async def work(runtime: RuntimeView, manager: Any) -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
        try:
            status = manager.status(name)
        except KeyError as exc:
            fail(str(exc.args[0]))
        # what approving would accept, shown in full: the operator reviews the definition itself
        held = [{"name": t.name, "description": t.description, "readOnlyHint": t.read_only_hint,
                 "argsSchema": dict(t.input_schema)}
                for t in manager.catalog(name).tools if t.name in status.drifted]
        rows = []
        for qualified in status.tools:
            spec = runtime.registry.get(qualified)
            if spec is None:
                continue
            gate = "pure_read" if spec.resource_class.value == "pure_read" else (
                "asks approval" if spec.approval_category else "read-only hint (no ask)")
            rows.append({"name": spec.name, "gate": gate, "summary": spec.summary, "argsSchema": dict(spec.args_schema)})
        return status, rows, held

    status, rows, held = _with_manager(ctx, work)
    if json_out:
        print_json({"server": status.to_json(), "tools": rows, "held": held})
        return
    print_table(["tool", "gate", "summary"], [[r["name"], r["gate"], r["summary"]] for r in rows])
    for tool in held:
        print(f"new or changed (disabled until `mcp approve {name} {tool['name']}`): {tool['name']}")
        print(f"  description: {tool['description']}")
        print(f"  readOnlyHint: {json.dumps(tool['readOnlyHint'])}")
        print(f"  args: {json.dumps(tool['argsSchema'], sort_keys=True)}")
    for reason in status.dropped:
        print(f"dropped: {reason}")
    for notice in status.notices:
        print(f"notice: {notice}")
    if status.last_error:
        print(f"{name} is {status.status}: {status.last_error}", file=sys.stderr)


@mcp_app.command("add")
def add_command(
    ctx: typer.Context,
    definition: str = typer.Argument(..., help="Server JSON (Claude Desktop / Cursor `mcpServers`, a server object, "
                                               "or this project's shape); `-` reads stdin."),
    name: str = typer.Option(None, "--name", help="Name for a lone server object without one."),
    replace: bool = typer.Option(False, "--replace", help="Replace a server that has the same name."),
    connect: bool = typer.Option(True, "--connect/--no-connect",
                                 help="Connect once now to check it and accept its tool catalog."),
) -> None:
    """Add MCP servers to config.json (then connect once to accept their catalogs)."""
    from atomic_agent.api import ConfigError

    from .config_persistence import ConfigPersistence, DuplicateServerError
    from .pasted_config import PastedConfigError, parse_pasted_servers

    text = sys.stdin.read() if definition == "-" else definition
    try:
        servers = parse_pasted_servers(text, name)
    except PastedConfigError as exc:
        fail(f"mcp add: {exc}")
    boot = current_cli_state(ctx).require()
    persistence = ConfigPersistence(boot.config.path, boot.config_blocks)
    try:
        for server in servers:
            persistence.add(server, replace=replace)
            print(f"added {server.name} ({server.transport.kind}, trust {server.trust}) to {boot.config.path}")
    except (DuplicateServerError, ConfigError, ValueError) as exc:
        fail(f"mcp add: {exc}")
    if not connect:
        return
    from .server_config import MCP_BLOCK, mcp_config

    drift = _drift_records(boot)
    for server in servers:
        drift.forget(server.name)  # a fresh add accepts the catalog as it is now
    # the runtime below must see the servers just written: swap them into the booted config
    block = mcp_config(boot)
    added = {s.name for s in servers}
    block = attrs.evolve(block, servers=tuple(s for s in block.servers if s.name not in added) + tuple(servers))
    boot.config = boot.config.with_block(MCP_BLOCK, block)

    async def work(runtime: RuntimeView, manager: Any) -> list[Any]:
        return [manager.status(s.name) for s in servers]

    failed = False
    for status in _with_manager(ctx, work):
        if status.status == "up":
            print(f"{status.name}: up, {len(status.tools)} tool(s) accepted"
                  + (f" ({status.server_info})" if status.server_info else ""))
        else:
            failed = True
            print(f"{status.name}: {status.status}: {status.last_error} (kept in config; fix it or "
                  f"`atomic-agent mcp remove {status.name}`)", file=sys.stderr)
    if failed:
        raise typer.Exit(1)


def _drift_records(boot: Any) -> Any:
    """The drift approvals the runtime keeps: the fleet's database when storage.url names one
    (the `shared_database` service built from the boot context), else the state file."""
    from atomic_agent.api import SessionStoreError
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    from .drift_store import DriftStore

    try:
        return DriftStore.open(boot.state_dir, boot.host.command_service(boot.state_dir, boot.config,
                                                                          SHARED_DATABASE_SERVICE))
    except SessionStoreError as exc:
        fail(str(exc))


@mcp_app.command("remove")
def remove_command(ctx: typer.Context, name: str = typer.Argument(..., help="Server name.")) -> None:
    """Remove a server from config.json (its drift records go too)."""
    from atomic_agent.api import ConfigError

    from .config_persistence import ConfigPersistence

    boot = current_cli_state(ctx).require()
    try:
        removed = ConfigPersistence(boot.config.path, boot.config_blocks).remove(name)
    except (ConfigError, ValueError) as exc:
        fail(f"mcp remove: {exc}")
    if not removed:
        fail(f"mcp remove: no MCP server named {name!r} is configured; `atomic-agent mcp list` shows them")
    _drift_records(boot).forget(name)
    print(f"removed {name}")


@mcp_app.command("approve")
def approve_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name."),
                    tool: str = typer.Argument(None, help="One tool (raw name); default: every tool of the server.")) -> None:
    """Accept the current definitions of a server's tools (re-enables drifted tools)."""

    async def work(runtime: RuntimeView, manager: Any) -> tuple[list[str], Any]:
        try:
            names = await manager.approve(server, tool)
        except KeyError as exc:
            fail(f"mcp approve: {exc.args[0]}")
        except Exception as exc:
            fail(f"mcp approve: {exc}")
        return names, manager.status(server)

    names, status = _with_manager(ctx, work)
    print(f"approved {len(names)} tool definition(s) of {server}; {len(status.tools)} tool(s) enabled"
          + (f", still drifted: {', '.join(status.drifted)}" if status.drifted else ""))


@mcp_app.command("call")
def call_command(
    ctx: typer.Context,
    server: str = typer.Argument(..., help="Server name."),
    tool: str = typer.Argument(..., help="The server's tool name (without the mcp.SERVER. prefix)."),
    args: str = typer.Option("{}", "--args", help="The tool's args as a JSON object."),
    approve: str = typer.Option(None, "--approve", help="Answer the approval prompt: never (deny) or once (allow)."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
    json_out: bool = typer.Option(False, "--json", help="Print status, summary and details as JSON."),
) -> None:
    """Call one MCP tool through the same validation and approval gate as the agent loop."""
    from atomic_agent.api import parse_json_object, stdin_approver

    from .mcp_tool_call import call_mcp_tool

    if approve is not None and approve not in APPROVE_MODES:
        fail(f"--approve must be one of {', '.join(APPROVE_MODES)}, got {approve!r}")
    parsed = parse_json_object(args, "--args", '{"a": 1}')

    async def work(runtime: RuntimeView, manager: Any) -> Any:
        if no_approval:
            runtime.gate.set_level(5)  # this process only
        try:
            return await call_mcp_tool(runtime, manager, server, tool, parsed, Path.cwd())
        except ValueError as exc:
            fail(f"mcp call: {exc}")

    result = _with_manager(ctx, work, ask=stdin_approver(fixed=approve))
    if json_out:
        print(json.dumps({"status": result.status, "summary": result.summary, "details": dict(result.details)},
                         indent=2, ensure_ascii=False, default=str))
    else:
        print(result.summary)
    raise typer.Exit(0 if result.status == "ok" else 1)


def _require_server(manager: Any, name: str) -> None:
    if name not in manager.names():
        fail(f"no MCP server named {name!r} is configured; `atomic-agent mcp list` shows them")
    if manager.status(name).status == "disabled":
        fail(f"{name} is disabled, so it is not connected; `atomic-agent mcp enable {name}` switches it on")


@mcp_app.command("resources")
def resources_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name."),
                      json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The resources a server offers (URI, name, MIME type, description)."""
    from atomic_agent.api import print_json, print_table

    async def work(runtime: RuntimeView, manager: Any) -> tuple[Any, list[Any]]:
        _require_server(manager, server)
        return manager.status(server), [r for _, r in manager.resources_of(server)]

    status, resources = _with_manager(ctx, work)
    rows = [{"uri": r.uri, "name": r.name, "mimeType": r.mime_type, "description": r.description} for r in resources]
    if json_out:
        print_json(rows)
    elif rows:
        print_table(["uri", "name", "type", "description"],
                    [[r["uri"], r["name"], r["mimeType"] or "-", r["description"][:60]] for r in rows])
    else:
        print(f"{server} offers no resources")
    if status.status != "up":
        print(f"{server} is {status.status}: {status.last_error}", file=sys.stderr)
        raise typer.Exit(1)


@mcp_app.command("prompts")
def prompts_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name."),
                    json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The prompts a server offers, with their arguments (* marks a required one)."""
    from atomic_agent.api import print_json, print_table

    async def work(runtime: RuntimeView, manager: Any) -> tuple[Any, list[Any]]:
        _require_server(manager, server)
        return manager.status(server), [p for _, p in manager.prompts_of(server)]

    status, prompts = _with_manager(ctx, work)
    rows = [{"name": p.name, "description": p.description,
             "arguments": [{"name": a.name, "required": a.required, "description": a.description}
                           for a in p.arguments]} for p in prompts]
    if json_out:
        print_json(rows)
    elif rows:
        print_table(["prompt", "arguments", "description"],
                    [[r["name"], ", ".join(a["name"] + ("*" if a["required"] else "") for a in r["arguments"]) or "-",
                      r["description"][:60]] for r in rows])
    else:
        print(f"{server} offers no prompts")
    if status.status != "up":
        print(f"{server} is {status.status}: {status.last_error}", file=sys.stderr)
        raise typer.Exit(1)


def _switch(ctx: typer.Context, server: str, enabled: bool) -> None:
    from atomic_agent.api import ConfigError

    from .config_persistence import ConfigPersistence

    boot = current_cli_state(ctx).require()
    try:
        before = ConfigPersistence(boot.config.path, boot.config_blocks).set_enabled(server, enabled)
    except (ConfigError, ValueError) as exc:
        fail(f"mcp {'enable' if enabled else 'disable'}: {exc}")
    if before is None:
        fail(f"no MCP server named {server!r} is configured; `atomic-agent mcp list` shows them")
    word = "enabled" if enabled else "disabled"
    if before == enabled:
        print(f"{server} was already {word}")
        return
    print(f"{server} {word} in {boot.config.path}; hosts started from now on "
          + ("connect it" if enabled else "leave it unconnected (its tools are gone from the prompt)")
          + " — restart a running serve, sidecar or telegram run to apply it there")


@mcp_app.command("enable")
def enable_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name.")) -> None:
    """Switch a configured server back on (config.json keeps its entry either way)."""
    _switch(ctx, server, True)


@mcp_app.command("disable")
def disable_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name.")) -> None:
    """Keep a server configured but never connect it (its tools leave the prompt)."""
    _switch(ctx, server, False)


@mcp_app.command("diff")
def diff_command(ctx: typer.Context, server: str = typer.Argument(..., help="Server name."),
                 tool: str = typer.Argument(None, help="One tool (raw name); default: every drifted tool."),
                 json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show each new or changed tool's approved and current definition, before `mcp approve`."""
    import difflib

    from atomic_agent.api import print_json

    from .drift_store import definition

    async def work(runtime: RuntimeView, manager: Any) -> list[dict[str, Any]]:
        _require_server(manager, server)
        status = manager.status(server)
        catalog = {t.name: t for t in manager.catalog(server).tools}
        names = [tool] if tool else list(status.drifted)
        if tool and tool not in catalog:
            fail(f"{server} offers no tool {tool!r} now; its tools: {', '.join(sorted(catalog)) or 'none'}")
        store = manager.drift  # the fleet's records on its database, else the state file
        return [{"tool": name, "drifted": name in status.drifted,
                 "approved": store.approved_definition(server, name), "current": definition(catalog[name])}
                for name in names if name in catalog]

    changes = _with_manager(ctx, work)
    if json_out:
        print_json(changes)
        return
    if not changes:
        print(f"no tool of {server} changed since it was approved")
        return
    for change in changes:
        name, old, new = change["tool"], change["approved"], change["current"]
        state = "changed" if change["drifted"] and old is not None else "new" if change["drifted"] else "approved"
        print(f"== {server} {name}: {state}")
        if old is None and change["drifted"]:
            print("(no approved definition is recorded: the tool is new, or was approved before definitions were "
                  "kept; the current one follows)")
        before = json.dumps(old, indent=2, sort_keys=True, ensure_ascii=False).splitlines() if old else []
        after = json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
        for line in difflib.unified_diff(before, after, "approved", "current", lineterm="", n=3):
            print(line)
        if change["drifted"]:
            print(f"accept it with `atomic-agent mcp approve {server} {name}`")
