"""A state dir holding two recorded sessions, and a CLI composed with the trace plugin."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

import atomic_agent.plugins.trace_cli as trace_cli
from atomic_agent.cli.cli_state import CliState
from atomic_agent.cli.main import build_app
from atomic_agent.runtime.boot_context import boot
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.tracing.prefix_hash import load_or_create_salt
from atomic_agent.tracing.trace_events import prompt_captured_fields, tool_invocation_fields
from atomic_agent.tracing.trace_recorder import TraceRecorder

SESSION = "sess-alpha"
OLDER_SESSION = "sess-older"
RECORDED_PREFIX = "persona v1 + tools v1"
LONG_TAIL = "### conversation\n" + "user: a long question line\n" * 40
COMPLETION = '[{"tool": "os.fs.read", "args": {"path": "/a"}}, {"tool": "os.fs.read", "args": {"path": "/b"}}]'


def record_session(state_dir: Path) -> None:
    salt = load_or_create_salt(state_dir)

    def prompt(step: int) -> dict:
        return prompt_captured_fields(stable_prefix=RECORDED_PREFIX, tail=LONG_TAIL, salt=salt, total_tokens=900,
                                      stable_prefix_tokens=600, tail_tokens=300, estimated=False, slot_id=1,
                                      cache_reused=step > 1)

    with TraceRecorder.for_session(state_dir, SESSION) as r:
        r.record("session_started", workingDir="/work")
        r.record("turn_started", turnIndex=0, userText="read a and b")
        r.record("step_started", turnIndex=0, step=1)
        r.record("prompt_captured", **prompt(1))
        r.record("llm_completion", content=COMPLETION, reasoningContent="", attempt=1, durationMs=40,
                 stopType="eos", tokensPredicted=30, cacheN=0, promptN=900)
        for i, path in enumerate(["/a", "/b"]):
            r.record("tool_invocation", tool="os.fs.read", args={"path": path}, status="ok",
                     summary=f"read {path}", **tool_invocation_fields(i, 2))
        r.record("step_finished", turnIndex=0, step=1, durationMs=60)
        r.record("step_started", turnIndex=0, step=2)
        r.record("prompt_captured", **prompt(2))
        r.record("llm_completion", content='[{"tool": "reply", "args": {"text": "done"}}]', reasoningContent="",
                 attempt=1, durationMs=20, stopType="eos", tokensPredicted=12, cacheN=600, promptN=300)
        r.record("tool_invocation", tool="reply", args={"text": "done"}, status="ok", summary="replied",
                 **tool_invocation_fields(0, 1))
        r.record("step_finished", turnIndex=0, step=2, durationMs=25)
        r.record("turn_finished", turnIndex=0, reason="reply", stepCount=2, durationMs=90)
    with TraceRecorder.for_session(state_dir, OLDER_SESSION) as r:
        r.record("session_started", workingDir="/old")
    os.utime(r.path, (1_000_000, 1_000_000))


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    record_session(state)
    return state


@pytest.fixture
def invoke(state_dir: Path) -> Callable[..., Result]:
    host = fresh_plugin_host()
    host.register(trace_cli, "trace_cli")
    ctx = boot(state_dir, environ={}, host=host)
    state = CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir)
    app = build_app(state)

    def run(*args: str) -> Result:
        return CliRunner().invoke(app, list(args))  # type: ignore[arg-type]

    return run
