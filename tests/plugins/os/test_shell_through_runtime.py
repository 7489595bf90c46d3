"""The shell tool inside the real runtime: the gate's levels and grants, the hardline floor,
and the os config blocks loaded from config.json. The model is scripted; tools are real."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls


def shell(cmd: str, args: list[str] | None = None) -> str:
    return calls(("os.shell.run", {"cmd": cmd, "args": args or []}))


def runtime(tmp_path: Path, script: list[str], level: int = 1, answers: list[str] | None = None,
            extra_config: dict[str, Any] | None = None) -> tuple[Runtime, list[Any]]:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({"agent": {"approvalLevel": level}, **(extra_config or {})}))
    asked: list[Any] = []
    pending = list(answers or [])

    async def ask(request: Any) -> str:
        asked.append(request)
        return pending.pop(0) if pending else "n"

    host = fresh_plugin_host()
    host.register(importlib.import_module("atomic_agent.plugins.os"), "os")
    ctx = boot(state, environ={}, host=host)
    return Runtime(ctx, provider=ScriptedProvider([*script, calls(("reply", {"text": "done"}))]), ask=ask,
                   environ={}), asked


async def results_of(rt: Runtime, tmp_path: Path) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    await rt.run_turn("go", on_event=events.append, working_dir=tmp_path)
    return [e for e in events if e.get("type") == "tool_call_result" and e.get("tool") == "os.shell.run"]


async def test_level_4_runs_shell_commands_without_asking(tmp_path: Path) -> None:
    rt, asked = runtime(tmp_path, [shell("echo", ["hello from the tool"])], level=4)
    [result] = await results_of(rt, tmp_path)
    assert result["status"] == "ok" and "hello from the tool" in result["summary"] and asked == []


async def test_below_level_4_the_gate_asks_with_category_and_shape(tmp_path: Path) -> None:
    rt, asked = runtime(tmp_path, [shell("echo", ["x"])], level=3, answers=["y"])
    [result] = await results_of(rt, tmp_path)
    assert result["status"] == "ok"
    assert asked[0].category == "shell" and asked[0].command_shape == "echo" and asked[0].binding


async def test_hardline_blocks_at_level_5_without_asking(tmp_path: Path) -> None:
    rt, asked = runtime(tmp_path, [shell("rm", ["-rf", "/"])], level=5)
    [result] = await results_of(rt, tmp_path)
    assert result["status"] == "error" and "hardline" in result["summary"] and asked == []


async def test_a_category_grant_silences_shell_but_not_the_hardline_floor(tmp_path: Path) -> None:
    script = [shell("echo", ["one"]), shell("ls"), shell("sudo rm -rf --no-preserve-root /")]
    rt, asked = runtime(tmp_path, script, level=1, answers=["s"])
    first, second, third = await results_of(rt, tmp_path)
    assert first["status"] == "ok" and second["status"] == "ok"
    assert len(asked) == 1
    assert third["status"] == "error" and "hardline" in third["summary"]


async def test_a_shape_grant_covers_one_binary_only(tmp_path: Path) -> None:
    script = [shell("echo", ["one"]), shell("echo", ["two"]), shell("pwd")]
    rt, asked = runtime(tmp_path, script, level=1, answers=["a", "n"])
    first, second, third = await results_of(rt, tmp_path)
    assert first["status"] == "ok" and second["status"] == "ok"
    assert [r.command_shape for r in asked] == ["echo", "pwd"] and third["status"] == "error"


async def test_an_interpreter_prompt_offers_no_shape_grant(tmp_path: Path) -> None:
    rt, asked = runtime(tmp_path, [shell("bash", ["-c", "echo hi"])], level=1, answers=["a"])
    [result] = await results_of(rt, tmp_path)
    assert asked[0].command_shape is None and not asked[0].can_grant_shape
    assert result["status"] == "ok"  # "a" without a shape still approves this one call


async def test_os_config_blocks_load_from_config_json(tmp_path: Path) -> None:
    rt, _ = runtime(tmp_path, [], extra_config={
        "exec": {"filterEnvironment": False, "allowedEnvironment": ["GITHUB_TOKEN"]},
        "http": {"approvalMode": "allowlist", "allowedHosts": ["api.github.com"], "privateHosts": ["127.0.0.1"]},
        "web": {"fetchMaxChars": 5000, "search": {"provider": "duckduckgo", "fallback": []}},
    })
    assert rt.config.block("exec").filter_environment is False
    assert rt.config.block("http").private_hosts == ("127.0.0.1",)
    assert rt.config.block("web").search.provider == "duckduckgo"
    assert rt.config.block("web").fetch_max_chars == 5000


async def test_my_os_tools_register_with_their_tiers_and_classes(tmp_path: Path) -> None:
    rt, _ = runtime(tmp_path, [])
    specs = {name: rt.registry.get(name) for name in (
        "os.shell.run", "os.git.status", "os.http.request", "os.web.fetch", "os.web.search", "os.proc.list",
        "os.proc.kill", "os.notify", "os.clipboard.read", "os.clipboard.write")}
    assert all(spec is not None for spec in specs.values())
    assert specs["os.shell.run"].approval_category == "shell"
    assert specs["os.http.request"].approval_category == "http"
    assert specs["os.proc.kill"].approval_category == "proc_kill"
    assert all(s.plugin == "os" for s in specs.values())
