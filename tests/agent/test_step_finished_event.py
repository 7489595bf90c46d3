"""Every step that ran its tools ends with one `step_finished` event carrying what the
server reported for that step's inference: the slot, cached and freshly evaluated prompt
tokens, tokens generated (a host's status bar shows them)."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.llm.provider_protocol import Completion
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls, common_prefix_length
from tests.agent.loop_harness import make_runtime


async def test_each_step_ends_with_the_completions_slot_and_token_counts(tmp_path: Path) -> None:
    answers = [Completion(content=calls(("t.read", {"path": "a"})), tokens_predicted=11),
               Completion(content=calls(("reply", {"text": "done"})), tokens_predicted=7)]
    provider = ScriptedProvider(answers, slot=1)
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    try:
        result = await rt.run_turn("read a", working_dir=tmp_path, on_event=events.append)
    finally:
        await rt.close()
    assert result.status == "done"
    kinds = [e["type"] for e in events]
    finished = [e for e in events if e["type"] == "step_finished"]
    assert [e["step"] for e in finished] == [0, 1]
    # after the step's tool results, before the next step starts
    assert kinds.index("step_finished") > kinds.index("tool_call_result")
    assert kinds.index("step_finished") < len(kinds) - 1 - kinds[::-1].index("step_started")
    prompts = [r.prompt for r in provider.requests]
    for event, prompt, before, predicted in zip(finished, prompts, ["", prompts[0]], (11, 7), strict=True):
        common = common_prefix_length(before, prompt)
        assert (event["slotId"], event["cacheN"], event["promptN"], event["tokensPredicted"]) == \
            (1, common // 4, (len(prompt) - common) // 4, predicted)
        assert event["sessionId"] == result.session_id and event["turnIndex"] == 0
    assert finished[1]["cacheN"] > 0  # the second step reuses the first one's prefix
