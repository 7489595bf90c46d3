"""A real runtime with the os and sandbox plugins, a scripted model, a gate at a chosen
level whose questions are answered from a list (and recorded), and helpers to read what
`os.shell.run` returned."""

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


def sandbox_runtime(tmp_path: Path, script: list[str], *, level: int = 1, sandbox: dict[str, Any] | None = None,
                    answers: list[str] | None = None) -> tuple[Runtime, list[Any], ScriptedProvider]:
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    config = {"agent": {"approvalLevel": level}, "sandbox": sandbox or {}}
    (state / "config.json").write_text(json.dumps(config))
    asked: list[Any] = []
    pending = list(answers or [])

    async def ask(request: Any) -> str:
        asked.append(request)
        return pending.pop(0) if pending else "n"

    host = fresh_plugin_host()
    for name in ("os", "sandbox"):
        host.register(importlib.import_module(f"atomic_agent.plugins.{name}"), name)
    provider = ScriptedProvider([*script, calls(("reply", {"text": "done"}))])
    return Runtime(boot(state, environ={}, host=host), provider=provider, ask=ask, environ={}), asked, provider


async def shell_results(rt: Runtime, workspace: Path, session_id: str | None = None) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    try:
        await rt.run_turn("go", session_id=session_id, on_event=events.append, working_dir=workspace)
    finally:
        await rt.close()
    return [e for e in events if e.get("type") == "tool_call_result" and e.get("tool") == "os.shell.run"]
