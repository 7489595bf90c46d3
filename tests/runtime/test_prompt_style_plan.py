"""The runtime resolves `prompt.style` once per plan, from the provider's model facts: the
starter model (by its parameter count or, without one, its name) gets the coached prompt,
any other model the full one, and a set style wins. Every step of the turn, the trace and
`prompt show` use the resolved style."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_agent.runtime.prompt_plan import preview_prompt
from atomic_agent.testing.runtime_kit import runtime_for_test
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls

COACHED_MARK = "A turn has two steps"
FULL_MARK = "Carry a task through to the end"


class SizedProvider(ScriptedProvider):
    """A scripted model that reports a parameter count, as llama-server's /v1/models does."""

    def __init__(self, *args: object, n_params: int | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.n_params = n_params

    async def describe(self) -> dict[str, object]:
        facts = await super().describe()
        return {**facts, "n_params": self.n_params} if self.n_params is not None else facts


@pytest.mark.parametrize(("alias", "n_params", "setting", "expected", "reason"), [
    ("model", 134_515_008, "auto", "coached", "auto: model reports 135M parameters"),
    ("SmolLM2-135M-Instruct", None, "auto", "coached",
     "auto: no parameter count reported; model 'SmolLM2-135M-Instruct' is a small model"),
    ("Qwen3-8B", 8_190_735_360, "auto", "full", "auto: model reports 8.2B parameters"),
    ("Qwen3-8B", 8_190_735_360, "coached", "coached", "set by prompt.style"),
    ("model", 134_515_008, "full", "full", "set by prompt.style"),
])
async def test_every_step_of_a_turn_uses_the_resolved_style(tmp_path: Path, alias: str, n_params: int | None,
                                                             setting: str, expected: str, reason: str) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    provider = SizedProvider([calls(("tool.view", {"name": "reply"})), calls(("reply", {"text": "ok"}))],
                             model_alias=alias, n_params=n_params)
    runtime = await runtime_for_test(tmp_path / "state", provider=provider, config={"prompt": {"style": setting}})
    try:
        plan = await runtime.prompt_plan()
        result = await runtime.run_turn("what is in a.txt?", working_dir=tmp_path)
    finally:
        await runtime.close()
    assert (plan.style.name, plan.style.reason) == (expected, reason)
    assert result.status == "done" and len(provider.requests) == 2
    mark, other = (COACHED_MARK, FULL_MARK) if expected == "coached" else (FULL_MARK, COACHED_MARK)
    for request in provider.requests:
        assert mark in request.prompt and other not in request.prompt
    trace = tmp_path / "state" / "traces" / f"{result.session_id}.ndjson"
    captured = [json.loads(line) for line in trace.read_text().splitlines() if '"prompt_captured"' in line]
    assert [event["promptStyle"] for event in captured] == [expected, expected]


async def test_prompt_show_names_the_style_and_why(tmp_path: Path) -> None:
    provider = SizedProvider(model_alias="m", n_params=134_515_008)
    runtime = await runtime_for_test(tmp_path / "state", provider=provider)
    try:
        preview = await preview_prompt(runtime, message="hello", working_dir=tmp_path)
    finally:
        await runtime.close()
    assert preview.style.describe() == "coached (auto: model reports 135M parameters)"
    assert COACHED_MARK in preview.text
