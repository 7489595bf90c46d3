"""SVG snapshots (pytest-textual-snapshot) of the main screens: the chat with a turn's step
feed and a Markdown reply, the approval modal, the Privacy ladder and the Tools list.

The content is fixed (events fed to the app, a fixed session id) so a snapshot changes only
when the rendering does. Update after an intended change with `--snapshot-update`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins import tui as tui_plugin
from atomic_agent.plugins.tui.approval_modal import ApprovalModal
from atomic_agent.plugins.tui.steering_editor import SteeringEditor
from atomic_agent.plugins.tui.tui_app import AtomicTui
from tests.agent.loop_harness import TestToolsPlugin, ToolLog

SIZE = (100, 30)
SESSION = "s-20261207-demo"


@attrs.frozen
class Request:  # the fields the modal reads from the gate's ApprovalRequest
    session_id: str = SESSION
    tool: str = "os.shell.run"
    category: str = "shell"
    label: str = "shell command"
    summary: str = "git clean -fdx build/ (cwd /home/me/project)"
    command_shape: str | None = "git clean"
    level: int = 1
    can_grant_category: bool = True
    can_grant_shape: bool = True
    binding: str | None = "3f9a0c2d41b7e855"
    note: str = ""


DEMO_EVENTS: list[dict[str, Any]] = [
    {"type": "turn_started", "sessionId": SESSION, "turnIndex": 0},
    {"type": "step_started", "step": 0},
    {"type": "tool_call_started", "tool": "os.fs.glob", "args": {"pattern": "*.csv"}, "batchIndex": 0, "batchSize": 2},
    {"type": "tool_call_started", "tool": "os.fs.read", "args": {"path": "notes.md"}, "batchIndex": 1, "batchSize": 2},
    {"type": "tool_call_result", "tool": "os.fs.glob", "status": "ok", "summary": "3 files: a.csv b.csv c.csv",
     "batchIndex": 0, "batchSize": 2},
    {"type": "tool_call_result", "tool": "os.fs.read", "status": "ok", "summary": "42 lines", "batchIndex": 1,
     "batchSize": 2},
    {"type": "step_started", "step": 1},
    {"type": "parse_retry", "reason": "expected a JSON array"},
    {"type": "steer_applied", "stepIndex": 1, "text": "only the CSV files, please"},
    {"type": "assistant_reply", "text": "Found **3 CSV files**:\n\n- `a.csv`\n- `b.csv`\n- `c.csv`"},
    {"type": "turn_finished", "status": "done", "reason": "reply", "steps": 2, "durationMs": 1830.0},
]


def snapshot_app(tmp_path: Path) -> tuple[AtomicTui, Any]:
    runtime = asyncio.run(runtime_for_test(tmp_path / "state", plugins={"tools": TestToolsPlugin(ToolLog()),
                                                                         "tui": tui_plugin},
                                           provider=ScriptedProvider([]), start=False))
    return AtomicTui(runtime, working_dir=tmp_path), runtime


def run_snapshot(snap_compare: Any, tmp_path: Path, prepare: Any) -> bool:
    app, runtime = snapshot_app(tmp_path)

    async def before(pilot: Any) -> None:
        await runtime.start()
        app.query_one(SteeringEditor).cursor_blink = False  # a blinking caret would differ frame to frame
        await prepare(app, pilot)
        await pilot.pause(0.1)

    try:
        return snap_compare(app, terminal_size=SIZE, run_before=before)
    finally:
        asyncio.run(runtime.close())


def test_chat_with_a_turn_snapshot(snap_compare: Any, tmp_path: Path) -> None:
    async def prepare(app: AtomicTui, pilot: Any) -> None:
        app.orchestrator.session_id = SESSION
        app.user_message("which data files are here?", "")
        for event in DEMO_EVENTS:
            app.turn_event(event)
        app.state_changed()

    assert run_snapshot(snap_compare, tmp_path, prepare)


def test_approval_modal_snapshot(snap_compare: Any, tmp_path: Path) -> None:
    async def prepare(app: AtomicTui, pilot: Any) -> None:
        app.push_screen(ApprovalModal(Request()))

    assert run_snapshot(snap_compare, tmp_path, prepare)


def test_privacy_tab_snapshot(snap_compare: Any, tmp_path: Path) -> None:
    async def prepare(app: AtomicTui, pilot: Any) -> None:
        app.runtime.gate.grant(SESSION, "http")
        await pilot.press("f4")

    assert run_snapshot(snap_compare, tmp_path, prepare)


def test_tools_tab_snapshot(snap_compare: Any, tmp_path: Path) -> None:
    async def prepare(app: AtomicTui, pilot: Any) -> None:
        await pilot.press("f3")
        await pilot.press("enter")

    assert run_snapshot(snap_compare, tmp_path, prepare)
