"""Prompt styles: `coached` is the starter model's prompt byte for byte, `full` the capable
models' (golden files pin both), and `auto` picks between them from the model's facts."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from atomic_agent.config.app_config import AgentConfig
from atomic_agent.llm.model_profile import PLAIN_CHATML_PROFILE
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix
from atomic_agent.prompt.prompt_assets import make_prompt_env
from atomic_agent.prompt.prompt_style import (
    AUTO,
    COACHED,
    FULL,
    PromptStyle,
    format_params,
    resolve_prompt_style,
    templates_of,
)
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_STARTED,
    USER,
    TranscriptEntry,
)
from tests.golden_files import assert_matches_golden
from tests.prompt.test_build_prompt import CAPS, GOLDEN, registry, session_with_turns
from tests.prompt.test_instructions_and_respond import registry_with

EVERYDAY = ("os.fs.list", "os.fs.read", "os.fs.grep", "os.git.status", "os.git.log")
# what only the starter model's coaching says: the two-step turn, the keyword picks, the
# worked example, the restated request and the prefilled reply
COACHING = ("A turn has two steps", "For step 1 pick the tool", "Example turn:", "The user asked:",
            "Respond now with step 1", "reply with the answer taken from it")


def prefix(style: str, reg=None) -> str:
    return build_stable_prefix(make_prompt_env(), reg or registry(), CAPS, max_calls=8, style=style)


def tail(style: str, session: SessionState) -> str:
    return build_prompt(env=make_prompt_env(), stable_prefix="P", profile=PLAIN_CHATML_PROFILE,
                        registry=registry_with(*EVERYDAY), session=session, agent=AgentConfig(),
                        today=date(2026, 12, 2), style=style).tail


def session_after(*results: tuple[str, str, str], text: str = "which commit is newest?") -> SessionState:
    state = SessionState(id="s", working_dir=Path("/work/demo"), created_at="")
    state.entries += [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text=text)]
    for index, (tool, _status, _result) in enumerate(results):
        state.entries.append(TranscriptEntry(TOOL_CALL, 0, step=0, batch_index=index, tool=tool, args={"path": "."}))
    for index, (tool, status, result) in enumerate(results):
        state.entries.append(TranscriptEntry(TOOL_RESULT, 0, step=0, batch_index=index, tool=tool, status=status,
                                             text=result))
    return state


def test_coached_is_the_prompt_the_starter_model_always_had():
    # the goldens test_build_prompt.py pins were written before styles existed
    assert prefix(COACHED) == build_stable_prefix(make_prompt_env(), registry(), CAPS, max_calls=8)
    assert_matches_golden(GOLDEN / "stable_prefix_coached.txt", prefix(COACHED))
    built = build_prompt(env=make_prompt_env(), stable_prefix="PREFIX", profile=PLAIN_CHATML_PROFILE,
                         registry=registry(), session=session_with_turns(2), agent=AgentConfig(),
                         notices=["stop repeating"], today=date(2026, 12, 2), style=COACHED)
    assert_matches_golden(GOLDEN / "tail_coached.txt", built.tail)


def test_full_stable_prefix_bytes_are_pinned_by_a_golden_file():
    assert_matches_golden(GOLDEN / "stable_prefix_full.txt", prefix(FULL))


def test_full_tail_bytes_are_pinned_by_golden_files():
    assert_matches_golden(GOLDEN / "tail_full.txt", tail(FULL, session_after(("os.git.log", "ok", "abc123 fix"))))
    failed = session_after(("os.fs.read", "ok", "a.txt · 1 line"), ("os.fs.read", "error", "no such file: b.txt"))
    assert_matches_golden(GOLDEN / "tail_full_failed_call.txt", tail(FULL, failed))


def test_full_prompt_has_none_of_the_starter_coaching():
    everyday = registry_with(*EVERYDAY)
    text = prefix(FULL, everyday) + tail(FULL, session_after()) + tail(FULL, session_after(("os.git.log", "ok", "x")))
    for line in COACHING:
        assert line not in text
    # the same request under coached does carry it (so the check above can fail)
    coached = prefix(COACHED, everyday) + tail(COACHED, session_after())
    assert sum(line in coached for line in COACHING) >= 4


def test_full_prompt_never_prefills_the_latest_tool_result_as_a_reply():
    result = "abc123 2026-11-30 Ada: fix the flaky test"
    full = tail(FULL, session_after(("os.git.log", "ok", result)))
    coached = tail(COACHED, session_after(("os.git.log", "ok", result)))
    respond = full[full.index("### respond"):]
    assert result not in respond and '"tool": "reply"' not in respond
    assert result in coached[coached.index("### respond"):]  # what full leaves out


def test_full_prompt_teaches_multi_step_work_batching_and_verifying():
    import attrs

    from atomic_agent.tools.tool_registry import ToolRegistry

    with_examples = [attrs.evolve(spec, example=f'{{"tool": "{spec.name}", "args": {{"path": "a.txt"}}}}')
                     if spec.name.startswith("os.") else spec for spec in registry_with(*EVERYDAY).specs()]
    text = prefix(FULL, ToolRegistry(with_examples))
    rules = text[text.index("### rules"):text.index("### tools")]
    for idea in ("as many steps as it needs", "in one array", "Verify before you reply", "in your own words"):
        assert idea in rules
    # the examples are the tools' own calls, two independent reads batched in one array
    instructions = text[text.index("### instructions"):]
    assert '[{"tool": "os.fs.grep", "args": {"path": "a.txt"}}, {"tool": "os.fs.list", "args": {"path": "a.txt"}}]' \
        in instructions


def test_a_failed_call_in_the_latest_batch_is_pointed_out_and_an_older_one_is_not():
    ok = tail(FULL, session_after(("os.fs.read", "ok", "fine")))
    failed = tail(FULL, session_after(("os.fs.read", "error", "no such file"), ("os.fs.read", "ok", "fine")))
    assert "failed" not in ok[ok.index("### respond"):]
    assert "A call in your last batch failed" in failed
    later = session_after(("os.fs.read", "error", "no such file"))
    later.entries += [TranscriptEntry(TOOL_CALL, 0, step=1, batch_index=0, tool="os.fs.list", args={}),
                      TranscriptEntry(TOOL_RESULT, 0, step=1, batch_index=0, tool="os.fs.list", status="ok",
                                      text="a.txt")]
    assert "A call in your last batch failed" not in tail(FULL, later)


@pytest.mark.parametrize("style", [COACHED, FULL])
def test_each_styles_stable_prefix_ignores_registration_order(style: str):
    specs = list(registry().specs())
    from atomic_agent.tools.tool_registry import ToolRegistry

    assert prefix(style, ToolRegistry(specs)) == prefix(style, ToolRegistry(list(reversed(specs))))


@pytest.mark.parametrize(("facts", "style", "reason"), [
    ({"model_alias": "x", "n_params": 134_515_008}, COACHED, "auto: model reports 135M parameters"),
    ({"model_alias": "SmolLM2-360M", "n_params": 361_821_120}, COACHED, "auto: model reports 362M parameters"),
    ({"model_alias": "qwen", "n_params": 7_615_616_512}, FULL, "auto: model reports 7.6B parameters"),
    # a parameter count wins over a name that looks small
    ({"model_alias": "smollm-but-big", "n_params": 3_000_000_000}, FULL, "auto: model reports 3B parameters"),
    ({"model_alias": "SmolLM2-135M-Instruct"}, COACHED,
     "auto: no parameter count reported; model 'SmolLM2-135M-Instruct' is a small model"),
    ({"model_alias": "", "model_path": "/m/smollm2-360m-q8_0.gguf"}, COACHED,
     "auto: no parameter count reported; model 'smollm2-360m-q8_0.gguf' is a small model"),
    ({"model_alias": "Qwen3-8B-Q4_K_M"}, FULL,
     "auto: no parameter count reported; model 'Qwen3-8B-Q4_K_M' is not a known small model"),
    ({"model_alias": "", "model": "anthropic/claude-sonnet-4", "provider": "openrouter"}, FULL,
     "auto: remote provider 'openrouter'"),
    ({"chat_template": "", "model_alias": "", "reachable": False}, FULL, "auto: the model is unknown (no server answered)"),
    ({}, FULL, "auto: the provider reports neither a model size nor a name"),
    ({"model_alias": "y", "n_params": True}, FULL,
     "auto: no parameter count reported; model 'y' is not a known small model"),
])
def test_auto_picks_coached_only_for_a_small_model(facts: dict, style: str, reason: str):
    assert resolve_prompt_style(AUTO, facts) == PromptStyle(style, reason)


def test_a_set_style_is_taken_whatever_the_model():
    small = {"n_params": 134_515_008}
    assert resolve_prompt_style(FULL, small) == PromptStyle(FULL, "set by prompt.style")
    assert resolve_prompt_style(COACHED, {"provider": "openrouter"}).name == COACHED
    assert PromptStyle(COACHED, "auto: model reports 135M parameters").describe() == \
        "coached (auto: model reports 135M parameters)"


def test_an_unknown_style_names_the_allowed_ones():
    with pytest.raises(ValueError, match="prompt.style must be one of auto, coached, full; got 'fancy'"):
        resolve_prompt_style("fancy", {})
    with pytest.raises(ValueError, match="resolve 'auto'"):
        templates_of(AUTO)
    with pytest.raises(ValueError):
        PromptStyle(AUTO)


def test_parameter_counts_read_like_a_model_card():
    assert [format_params(n) for n in (134_515_008, 999_999_999, 1_000_000_000, 7_615_616_512, 70_553_706_496)] == \
        ["135M", "1000M", "1B", "7.6B", "70.6B"]


def test_the_worked_example_shows_only_with_its_tools_and_every_call_line_is_valid_json():
    import json

    shown = prefix(FULL, registry_with("os.fs.read", "os.fs.edit", "os.shell.run"))
    example = shown[shown.index("Example task:"):]
    arrays = [json.loads(line) for line in example.splitlines() if line.startswith("[{")]
    assert [len(a) for a in arrays] == [2, 1, 1, 1]  # the reads batched, the reply alone and last
    assert arrays[-1][0]["tool"] == "reply" and {c["tool"] for a in arrays for c in a} <= {
        "os.fs.read", "os.fs.edit", "os.shell.run", "reply"}
    assert "Example task:" not in prefix(FULL, registry_with("os.fs.read", "os.fs.edit"))
