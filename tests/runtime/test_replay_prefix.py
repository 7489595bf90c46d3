"""`trace replay` rebuilds the recorded stable prefix: no drift for an unchanged runtime,
drift once the upper prompt changes (a template override here). The prefix is rebuilt in the
prompt style the trace recorded: overriding the other style's template changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.trace_cli.prefix_replay import replay_prefix_drift
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls

# (model alias the scripted provider reports, its style's stable prefix, the other style's)
STYLES = {"coached": ("SmolLM2-135M-Instruct", "stable_prefix_coached.j2", "stable_prefix_full.j2"),
          "full": ("scripted", "stable_prefix_full.j2", "stable_prefix_coached.j2")}


@pytest.mark.parametrize("style", sorted(STYLES))
async def test_replay_reports_match_then_drift_after_a_template_change(tmp_path: Path, style: str):
    alias, used, other = STYLES[style]
    state = tmp_path / "state"
    provider = ScriptedProvider([calls(("tool.view", {"name": "reply"})), calls(("reply", {"text": "ok"}))],
                                chat_template="<|im_start|>{{ messages }}", model_alias=alias)
    rt = Runtime(boot(state, environ={}), provider=provider, environ={})
    result = await rt.run_turn("hi", working_dir=tmp_path)
    await rt.close()
    report = replay_prefix_drift(state, result.session_id)
    assert report.steps and not report.drifted
    (state / "templates").mkdir()
    (state / "templates" / other).write_text("### system\nthe other style's prompt\n")
    assert not replay_prefix_drift(state, result.session_id).drifted
    (state / "templates" / used).write_text("### system\nsomething else entirely\n")
    assert replay_prefix_drift(state, result.session_id).drifted
