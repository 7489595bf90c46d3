"""`trace replay` rebuilds the recorded stable prefix: no drift for an unchanged runtime,
drift once the upper prompt changes (a template override here)."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugins.trace_cli.prefix_replay import replay_prefix_drift
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls


async def test_replay_reports_match_then_drift_after_a_template_change(tmp_path: Path):
    state = tmp_path / "state"
    provider = ScriptedProvider([calls(("tool.view", {"name": "reply"})), calls(("reply", {"text": "ok"}))],
                                chat_template="<|im_start|>{{ messages }}")
    rt = Runtime(boot(state, environ={}), provider=provider, environ={})
    result = await rt.run_turn("hi", working_dir=tmp_path)
    await rt.close()
    report = replay_prefix_drift(state, result.session_id)
    assert report.steps and not report.drifted
    (state / "templates").mkdir()
    (state / "templates" / "stable_prefix.j2").write_text("### system\nsomething else entirely\n")
    assert replay_prefix_drift(state, result.session_id).drifted
