"""An AtomicTui over a real runtime (test kit) with a scripted model and in-process test
tools (t.read waits `ms`, or until the test releases a held path; t.gated asks the approval gate under the shell category)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins import tui as tui_plugin
from atomic_agent.plugins.tui.tui_app import AtomicTui
from atomic_agent.plugins.tui.tui_approver import TuiApprover
from tests.agent.loop_harness import TestToolsPlugin, ToolLog


def calls(*pairs: tuple[str, dict[str, Any]]) -> str:
    from atomic_agent.testing.scripted_provider import calls as scripted_calls

    return scripted_calls(*pairs)


@contextlib.asynccontextmanager
async def tui_app(tmp_path: Path, script: list[Any], *, config: dict[str, Any] | None = None,
                  extra_plugins: dict[str, object] | None = None, size: tuple[int, int] = (100, 32),
                  session_id: str | None = None, mouse: bool | None = None,
                  provider: Any = None, log: ToolLog | None = None) -> AsyncIterator[tuple[AtomicTui, Any, Any]]:
    approver = TuiApprover()
    plugins: dict[str, object] = {"tools": TestToolsPlugin(log or ToolLog()), "tui": tui_plugin, **(extra_plugins or {})}
    runtime = await runtime_for_test(tmp_path / "state", plugins=plugins, config=config,
                                     provider=provider or ScriptedProvider(script), ask=approver.ask)
    try:
        app = AtomicTui(runtime, session_id=session_id, mouse=mouse, working_dir=tmp_path, approver=approver)
        async with app.run_test(size=size) as pilot:
            yield app, pilot, runtime
    finally:
        await runtime.close()


def shown(app: AtomicTui, screen_type: type) -> bool:
    """Whether the app shows a screen of `screen_type` that has finished mounting: a pushed
    screen is on the stack before its widgets exist, and a test that queries or presses keys
    in between races its compose on a loaded machine."""
    return isinstance(app.screen, screen_type) and app.screen.is_mounted


def held(path: str) -> tuple[ToolLog, asyncio.Event]:
    """A tool log whose t.read on `path` runs until the test sets the returned event, so the
    test acts while the tool runs without racing a timer on a loaded machine."""
    log = ToolLog()
    return log, log.hold(path)


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Pause the pilot until `condition()` holds (a turn runs on the app's own loop). The
    timeout only catches a hung test: a loaded CI machine may be slow, never wrong."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


async def type_and_send(pilot: Any, app: AtomicTui, text: str) -> None:
    from atomic_agent.plugins.tui.steering_editor import SteeringEditor

    editor = app.query_one(SteeringEditor)
    editor.focus()
    editor.insert(text)
    await pilot.press("enter")


def chat_text(app: AtomicTui) -> str:
    """Everything the chat tab shows, as plain text."""
    from textual.widgets import Markdown, Static

    from atomic_agent.plugins.tui.chat_view import ChatView
    from atomic_agent.plugins.tui.step_feed import StepFeed

    parts = []
    for widget in app.query_one(ChatView).children:
        if isinstance(widget, StepFeed):
            parts.append(widget.plain())
        elif isinstance(widget, Markdown):
            parts.append(widget.source)
        elif isinstance(widget, Static):
            parts.append(str(widget.render()))
    return "\n".join(parts)
