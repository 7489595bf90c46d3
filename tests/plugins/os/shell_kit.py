"""The fs world (fake home, workspace, state dir) with the shell tool and a real gate that
knows every category the os tools ask under, at a chosen approval level.

`shell(world, line)` runs `os.shell.run` through the gate and says what happened: refused
by the guard (`blocked`), the categories it asked under, and whether it ran.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import approval_gate, make_runtime_view
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate
from atomic_agent.plugins.os.fs_approval.fs_categories import PERSISTENCE, SENSITIVE_READ
from atomic_agent.plugins.os.shell import approval_categories
from atomic_agent.plugins.os.shell.shell_tool import shell_tool_spec
from tests.plugins.os.fs_kit import FsWorld, make_world

SECRET = "sk-live-SECRET-0123456789"
TOKEN = "op-token-" + "7" * 40


@attrs.frozen
class ShellOutcome:
    blocked: bool
    asked: tuple[str, ...]
    ran: bool
    text: str


def shell_world(tmp_path: Path, monkeypatch: Any, level: int) -> FsWorld:
    """A world whose state dir holds a `.env`, an operator token and an audit log."""
    world = make_world(tmp_path, monkeypatch, level=level)
    world.gate = ApprovalGate([*STANDARD_CATEGORIES, PERSISTENCE, SENSITIVE_READ, *approval_categories()], level,
                              world.asker, audit=ApprovalAuditLog(approval_gate.audit_path(world.state)))
    (world.state / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    (world.state / "serve").mkdir(mode=0o700)
    (world.state / "serve" / "operator-token").write_text(TOKEN + "\n")
    world.specs["os.shell.run"] = shell_tool_spec(make_runtime_view(world.state))
    return world


async def shell(world: FsWorld, cmd: str | list[str]) -> ShellOutcome:
    """Run `cmd` (a whole line, or an argv) and report how the guard and the gate treated it."""
    before = len(world.asker.requests)
    args: dict[str, Any] = {"cmd": cmd} if isinstance(cmd, str) else {"cmd": cmd[0], "args": cmd[1:]}
    result = await world.call("os.shell.run", args)
    asked = tuple(world.asker.categories[before:])
    guard = result.details.get("guard", {})
    text = result.summary + repr(dict(result.details))
    return ShellOutcome(guard.get("verdict") == "hardline", asked, "exitCode" in result.details, text)
