"""A small world for fs tool tests: a home dir holding a workspace and the state dir, an
outside dir, a real ApprovalGate with the standard categories, and a context bound to it.

HOME is pointed at the fake home so workspace / home / outside are decided by the test.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import ApprovalAnswer, ToolContext, ToolResult, approval_gate, make_runtime_view
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate
from atomic_agent.plugins.os.fs import tool_specs


@attrs.define
class AskRecorder:
    """An `ask` host that records every request and answers from a list (default: deny)."""

    answers: list[Any] = attrs.field(factory=list)
    requests: list[Any] = attrs.field(factory=list)

    async def __call__(self, request: Any) -> Any:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else ApprovalAnswer.deny()

    @property
    def categories(self) -> list[str]:
        return [r.category for r in self.requests]


@attrs.define
class FsWorld:
    root: Path
    home: Path
    ws: Path
    state: Path
    outside: Path
    asker: AskRecorder
    gate: ApprovalGate
    specs: dict[str, Any]
    session_id: str = "s1"

    def ctx(self, session_id: str | None = None, working_dir: Path | None = None) -> ToolContext:
        sid = session_id or self.session_id
        return ToolContext(session_id=sid, working_dir=working_dir or self.ws, state_dir=self.state,
                           cancelled=asyncio.Event(),
                           request_approval=approval_gate.bind_request_approval(self.gate, sid, "test"),
                           services={"state_dir": self.state})

    async def call(self, name: str, args: Mapping[str, Any], session_id: str | None = None,
                   working_dir: Path | None = None) -> ToolResult:
        from atomic_agent.api import args_errors

        spec = self.specs[name]
        problems = args_errors(spec.args_schema, args)
        assert not problems, problems
        return await spec.run(dict(args), self.ctx(session_id, working_dir))

    def audit(self) -> list[dict[str, Any]]:
        return ApprovalAuditLog(approval_gate.audit_path(self.state)).read()


def make_world(tmp_path: Path, monkeypatch: Any, level: int = 1, answers: list[Any] | None = None,
               services: Mapping[str, Any] | None = None, config: Mapping[str, Any] | None = None) -> FsWorld:
    root = tmp_path.resolve()
    home, outside = root / "home", root / "outside"
    ws, state = home / "ws", home / ".atomic-agent"
    for d in (ws, state, outside):
        d.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    if config is not None:
        (state / "config.json").write_text(json.dumps(config))
    asker = AskRecorder(list(answers or []))
    gate = ApprovalGate(STANDARD_CATEGORIES, level, asker, audit=ApprovalAuditLog(approval_gate.audit_path(state)))
    view = make_runtime_view(state, services)
    specs = {s.name: s for s in tool_specs(view)}
    return FsWorld(root, home, ws, state, outside, asker, gate, specs)
