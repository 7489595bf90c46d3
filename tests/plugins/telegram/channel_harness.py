"""A real runtime with the Telegram plugin, pointed at a FakeBotApi, plus two test tools:
`test.ask` asks for approval (category `other`, asked below level 5) and `test.wait` blocks
until the test releases it (a turn that is still running when the phone writes again)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec, hookimpl

from .fake_bot_api import TOKEN, FakeBotApi

OWNER = 4242
STRANGER = 9999
NO_ARGS = {"type": "object", "properties": {}, "additionalProperties": False}


class GateTools:
    """The test plugin: its tools and the events the test releases them with."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.entered = asyncio.Event()
        self.approvals: list[bool] = []

    async def _ask(self, args: Any, ctx: Any) -> ToolResult:
        approved = await ctx.request_approval("other", "delete the build cache")
        self.approvals.append(approved)
        return ToolResult.ok("approved and done" if approved else "denied: nothing done")

    async def _wait(self, args: Any, ctx: Any) -> ToolResult:
        self.entered.set()
        await self.release.wait()
        return ToolResult.ok("waited")

    @hookimpl
    def register_tools(self, runtime: Any) -> Iterable[ToolSpec]:
        return [ToolSpec(name="test.ask", summary="Ask before acting.", args_schema=NO_ARGS,
                         resource_class=ResourceClass.APPROVAL_GATED, tier=Tier.RARE, run=self._ask,
                         approval_category="other"),
                ToolSpec(name="test.wait", summary="Wait for the test.", args_schema=NO_ARGS,
                         resource_class=ResourceClass.PURE_READ, tier=Tier.RARE, run=self._wait)]


def write_state(state: Path, api: FakeBotApi | None, *, owner: int | None = OWNER, enabled: bool = True,
                parse_mode: str = "html", approval_timeout_ms: int = 480_000, token: str | None = TOKEN,
                poll_timeout_s: int = 2) -> Path:
    from atomic_agent.config.migrate_config import CONFIG_VERSION

    state.mkdir(parents=True, exist_ok=True)
    block: dict[str, Any] = {"enabled": enabled, "ownerUserId": owner, "parseMode": parse_mode,
                             "approvalTimeoutMs": approval_timeout_ms, "pollTimeoutS": poll_timeout_s}
    if api is not None:
        block["apiBase"] = api.url
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "telegram": block}))
    if token is not None:
        env = state / ".env"
        env.write_text(f"TELEGRAM_BOT_TOKEN={token}\n")
        env.chmod(0o600)
    return state


def boot_state(state: Path, tools: GateTools | None = None, environ: dict[str, str] | None = None) -> Any:
    from atomic_agent.api import boot_for_test

    plugins = {"telegram_test_tools": tools} if tools is not None else {}
    return boot_for_test(state, plugins=plugins, installed=True, environ=dict(environ or {}))


async def start_runtime(state: Path, provider: Any, tools: GateTools | None = None) -> Any:
    from atomic_agent.api import create_runtime

    return await create_runtime(boot_context=boot_state(state, tools), provider=provider, serving=True)


async def until(predicate: Any, timeout_s: float = 30.0, what: str = "condition") -> None:
    """Wait (cooperatively) until `predicate()`; the timeout only bounds a hung test."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s} s")
        await asyncio.sleep(0.02)


async def phone_sees(api: FakeBotApi, predicate: Any, timeout_s: float = 30.0) -> None:
    """Wait until the fake Bot API saw what `predicate()` checks (off the event loop)."""
    await asyncio.to_thread(api.wait_until, predicate, timeout_s)


def reply_texts(api: FakeBotApi, chat_id: int = OWNER) -> list[str]:
    return [m.text for m in api.sent if m.chat_id == chat_id and not m.reply_markup]


def answering(rules: dict[str, str], default: str = "done", count: int = 64) -> Any:
    """A ScriptedProvider that replies by the newest user message it finds in the prompt
    (after-turn sub-calls of memory plugins draw from the same provider, so a fixed script
    order would not say which turn gets what)."""
    from atomic_agent.api import ScriptedProvider
    from atomic_agent.testing.scripted_provider import calls

    def answer(request: Any) -> str:
        found = max(((request.prompt.rfind(asked), said) for asked, said in rules.items()), default=(-1, default))
        return calls(("reply", {"text": found[1] if found[0] >= 0 else default}))

    return ScriptedProvider([answer] * count, default=calls(("reply", {"text": default})))


def telegram_cli(state: Path, *args: str, input: str | None = None) -> Any:
    """Run `atomic-agent telegram ...` in-process (the telegram plugin only); the typer result."""
    import importlib

    from typer.testing import CliRunner

    from atomic_agent.cli.cli_state import CliState
    from atomic_agent.cli.main import build_app
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.testing.runtime_kit import fresh_plugin_host

    host = fresh_plugin_host()
    host.register(importlib.import_module("atomic_agent.plugins.telegram"), "telegram")
    ctx = boot(state, environ={}, host=host)
    app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
    return CliRunner().invoke(app, ["--state-dir", str(state), "telegram", *args], input=input)  # type: ignore[arg-type]
