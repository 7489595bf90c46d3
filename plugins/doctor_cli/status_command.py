"""`atomic-agent status`: one screen of how things stand — the model server, hosts, turns,
approvals, channels, tasks and the last errors — gathered from every plugin's
`report_status` (read-only; nothing is started, at most a loopback address is asked)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import typer

from atomic_agent.api import current_cli_state, print_json

SECTION_ORDER = ("model", "hosts", "sessions", "approvals", "channels", "tasks", "errors")
STATES = ("ok", "warn", "error", "off")
MARKS = {"ok": "ok", "warn": "WARN", "error": "ERROR", "off": "off"}


def _malformed(plugin: str, why: str) -> dict[str, Any]:
    return {"section": "errors", "name": f"plugin {plugin}", "state": "error", "plugin": plugin,
            "summary": f"its status report {why}", "problems": [], "detail": {}}


def _checked(plugin: str, item: Any) -> dict[str, Any]:
    if not isinstance(item, Mapping):
        return _malformed(plugin, f"returned {type(item).__name__}, not a mapping")
    for key in ("section", "name", "summary"):
        if not isinstance(item.get(key), str):
            return _malformed(plugin, f"has no text {key!r}")
    if item.get("state") not in STATES:
        return _malformed(plugin, f"has state {item.get('state')!r}, not one of {', '.join(STATES)}")
    problems = item.get("problems") or []
    return {"section": item["section"], "name": item["name"], "state": item["state"], "summary": item["summary"],
            "problems": [str(p) for p in problems] if isinstance(problems, (list, tuple)) else [str(problems)],
            "detail": dict(item.get("detail") or {}), "plugin": plugin}


def gather(host: Any, state_dir: Any, config: Any) -> list[dict[str, Any]]:
    """Every plugin's status lines, checked and sorted (known sections first, then by name)."""
    from atomic_agent.api import call_each_plugin

    lines: list[dict[str, Any]] = []
    for answer in call_each_plugin(host, "report_status", state_dir=state_dir, config=config, plugin_host=host):
        if answer.error:
            lines.append({**_malformed(answer.plugin, f"raised {answer.error}"), "summary": f"raised {answer.error}"})
            continue
        lines.extend(_checked(answer.plugin, item) for item in answer.value or ())
    rank = {name: i for i, name in enumerate(SECTION_ORDER)}
    return sorted(lines, key=lambda line: (rank.get(line["section"], len(rank)), line["section"], line["name"]))


def status_command(ctx: typer.Context,
                   json_out: bool = typer.Option(False, "--json", help="Print every line as JSON.")) -> None:
    """One screen: model server, hosts, turns running and queued, pending approvals, channels
    (Telegram, MCP), tasks due next and the last errors. Read-only."""
    state = current_cli_state(ctx)
    boot = state.require()
    lines = gather(state.host, boot.state_dir, boot.config)
    attention = [p for line in lines for p in line["problems"]]
    if json_out:
        print_json({"stateDir": str(boot.state_dir), "lines": lines, "attention": attention})
        return
    print(f"atomic-agent status of {boot.state_dir}")
    width = max((len(line["name"]) for line in lines), default=10)
    for line in lines:
        print(f"  {line['section']:<10} {line['name']:<{width}}  {MARKS[line['state']]:<5}  {line['summary']}")
    if attention:
        print("needs attention:")
        for problem in attention:
            print(f"  - {problem}")
