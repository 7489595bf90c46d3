"""Invariants of the assembled tool-call grammar (no server needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from atomic_agent.llm.model_profile import (
    GEMMA4_THINK_PROFILE,
    PLAIN_CHATML_PROFILE,
    PLAIN_TEXT_PROFILE,
    QWEN_THINK_PROFILE,
    ModelProfile,
)
from atomic_agent.prompt.build_grammar import (
    PRELUDE_TRAIL_WS_RULE,
    build_tool_call_grammar,
    tool_call_grammar_source,
)
from tests.golden_files import assert_matches_golden

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN_TOOLS = ("reply", "os.fs.read", "finish", "tool.view", "os.fs.write")
ALL_PROFILES = (PLAIN_TEXT_PROFILE, PLAIN_CHATML_PROFILE, QWEN_THINK_PROFILE, GEMMA4_THINK_PROFILE)
_LITERAL_OR_CLASS = re.compile(r'"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]')


def _rules(grammar: str) -> dict[str, str]:
    rules: dict[str, str] = {}
    for line in grammar.splitlines():
        name, _, body = line.partition(" ::= ")
        assert name not in rules, f"rule {name} defined twice"
        rules[name] = body
    return rules


def _root(grammar: str) -> str:
    return _rules(grammar)["root"]


def test_root_is_array_only() -> None:
    grammar = build_tool_call_grammar(["reply"], PLAIN_CHATML_PROFILE)
    assert _root(grammar) == "tool-call-array"
    assert "root ::= tool-call-array" in tool_call_grammar_source()


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=lambda p: f"{p.name}-{p.framing.name}")
def test_every_profile_root_ends_in_the_tool_call_array(profile: ModelProfile) -> None:
    root = _root(build_tool_call_grammar(["reply"], profile))
    assert root.endswith("tool-call-array")
    operators = _LITERAL_OR_CLASS.sub("", root)
    assert "|" not in operators and "step-call " not in operators + " "  # no single-object branch


def test_tool_call_shape_is_tool_then_args_object() -> None:
    rules = _rules(build_tool_call_grammar(["reply"], PLAIN_TEXT_PROFILE))
    assert rules["step-call"] == (
        '"{" ws "\\"tool\\"" ws ":" ws step-tool-name ws "," ws "\\"args\\"" ws ":" ws object ws "}"'
    )


@pytest.mark.parametrize("rule", ["batch", "final-call", "step-tool-name"])
def test_shipped_file_does_not_define_the_generated_rules(rule: str) -> None:
    assert not re.search(rf"^{rule}\s*::=", tool_call_grammar_source(), flags=re.MULTILINE)


def test_tool_names_sorted_deterministically() -> None:
    first = build_tool_call_grammar(["reply", "os.fs.read", "finish"], PLAIN_TEXT_PROFILE)
    second = build_tool_call_grammar(["finish", "reply", "os.fs.read"], PLAIN_TEXT_PROFILE)
    assert first == second
    assert _rules(first)["step-tool-name"] == '"\\"finish\\"" | "\\"os.fs.read\\"" | "\\"reply\\""'


def test_duplicate_tool_names_appear_once() -> None:
    grammar = build_tool_call_grammar(["reply", "reply", "finish"], PLAIN_TEXT_PROFILE)
    assert _rules(grammar)["step-tool-name"] == '"\\"finish\\"" | "\\"reply\\""'


def test_tool_names_are_escaped_as_json_string_literals() -> None:
    grammar = build_tool_call_grammar(['we"ird\\na\nme'], PLAIN_TEXT_PROFILE)
    # JSON form: "we\"ird\\na\nme" ; each backslash and quote escaped again for GBNF
    assert _rules(grammar)["step-tool-name"] == '"\\"we\\\\\\"ird\\\\\\\\na\\\\nme\\""'


@pytest.mark.parametrize("bad", ["", " reply", "reply\t"])
def test_blank_or_padded_tool_name_is_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="tool name"):
        build_tool_call_grammar(["reply", bad], PLAIN_TEXT_PROFILE)


def test_no_tool_names_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least one tool name"):
        build_tool_call_grammar([], PLAIN_TEXT_PROFILE)


def test_a_bare_string_is_not_taken_as_a_list_of_names() -> None:
    with pytest.raises(TypeError):
        build_tool_call_grammar("reply", PLAIN_TEXT_PROFILE)


@pytest.mark.parametrize(("max_calls", "bound"), [(16, "{0,15}"), (8, "{0,7}"), (1, "{0,0}"), (0, "{0,0}"),
                                                   (-3, "{0,0}"), (17, "{0,15}"), (1000, "{0,15}")])
def test_max_calls_is_clamped_into_one_to_sixteen(max_calls: int, bound: str) -> None:
    rules = _rules(build_tool_call_grammar(["reply"], PLAIN_TEXT_PROFILE, max_calls))
    assert rules["step-calls"] == f'step-call ( ws "," ws step-call ){bound}'


def test_prelude_trail_ws_is_bounded() -> None:
    assert PRELUDE_TRAIL_WS_RULE == "prelude-trail-ws ::= ( [ \\t\\n\\r] ){0,8}"
    for profile in (QWEN_THINK_PROFILE, GEMMA4_THINK_PROFILE):
        grammar = build_tool_call_grammar(["reply"], profile)
        assert PRELUDE_TRAIL_WS_RULE in grammar.splitlines()
        # the seam between the close sentinel and "[" is the bounded rule, not the global ws
        close = '"' + profile.reasoning_close + '"'
        assert f"{close} prelude-trail-ws tool-call-array" in _root(grammar)


def test_plain_grammar_has_no_reasoning_prelude() -> None:
    rules = _rules(build_tool_call_grammar(["reply"], PLAIN_CHATML_PROFILE))
    assert "prelude-trail-ws" not in rules and "think-body" not in rules and "channel-body" not in rules


def test_qwen_prefills_open_tag_and_grammar_starts_after_it() -> None:
    assert QWEN_THINK_PROFILE.prefill == "<think>\n"
    assert QWEN_THINK_PROFILE.reasoning_open_emitted_by_model is False
    grammar = build_tool_call_grammar(["reply"], QWEN_THINK_PROFILE)
    assert _root(grammar) == 'think-body "</think>" prelude-trail-ws tool-call-array'
    assert "<think>" not in grammar


def test_gemma_grammar_includes_channel_open() -> None:
    assert GEMMA4_THINK_PROFILE.reasoning_open_emitted_by_model is True
    assert GEMMA4_THINK_PROFILE.prefill == ""
    grammar = build_tool_call_grammar(["reply"], GEMMA4_THINK_PROFILE)
    assert _root(grammar) == '"<|channel>thought\\n" channel-body "<channel|>" prelude-trail-ws tool-call-array'


def test_reasoning_body_is_bounded_and_cannot_run_into_the_close_sentinel() -> None:
    qwen = _rules(build_tool_call_grammar(["reply"], QWEN_THINK_PROFILE, reasoning_max_chars=500))
    assert qwen["think-body"] == '( [^<] | "<" [^/<] ){0,500}'
    gemma = _rules(build_tool_call_grammar(["reply"], GEMMA4_THINK_PROFILE))
    assert gemma["channel-body"] == '( [^<] | "<" [^c<] ){0,6000}'


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=lambda p: f"{p.name}-{p.framing.name}")
def test_every_repetition_is_bounded(profile: ModelProfile) -> None:
    grammar = build_tool_call_grammar(["reply", "os.fs.read"], profile)
    operators = _LITERAL_OR_CLASS.sub("", grammar)
    assert "*" not in operators and "+" not in operators
    assert "{" in operators  # bounded {m,n} repetitions are what is used instead


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=lambda p: f"{p.name}-{p.framing.name}")
def test_every_referenced_rule_is_defined(profile: ModelProfile) -> None:
    rules = _rules(build_tool_call_grammar(["reply"], profile))
    for name, body in rules.items():
        for reference in re.findall(r"[a-z][a-z0-9-]*", _LITERAL_OR_CLASS.sub(" ", body)):
            assert reference in rules, f"rule {name} refers to undefined {reference}"


def test_args_nesting_depth_is_bounded() -> None:
    rules = _rules(build_tool_call_grammar(["reply"], PLAIN_TEXT_PROFILE))
    assert rules["pair-4"] == 'key ws ":" ws scalar'
    assert "object-5" not in rules and "array-5" not in rules


def test_comments_are_not_sent() -> None:
    grammar = build_tool_call_grammar(["reply"], PLAIN_TEXT_PROFILE)
    assert "#" in tool_call_grammar_source()
    assert not any(line.lstrip().startswith("#") or not line.strip() for line in grammar.splitlines())


def test_package_data_file_is_the_repository_file() -> None:
    on_disk = Path(__file__).parents[2] / "grammars" / "tool-call.gbnf"
    assert tool_call_grammar_source() == on_disk.read_text(encoding="utf-8")


@pytest.mark.parametrize("profile", ALL_PROFILES, ids=lambda p: f"{p.name}-{p.framing.name}")
def test_same_inputs_give_byte_identical_grammar(profile: ModelProfile) -> None:
    assert build_tool_call_grammar(GOLDEN_TOOLS, profile, 8) == build_tool_call_grammar(
        list(reversed(GOLDEN_TOOLS)), profile, 8
    )


@pytest.mark.parametrize("profile", [PLAIN_TEXT_PROFILE, QWEN_THINK_PROFILE, GEMMA4_THINK_PROFILE],
                         ids=lambda p: p.name)
def test_grammar_matches_golden_file(profile: ModelProfile) -> None:
    grammar = build_tool_call_grammar(GOLDEN_TOOLS, profile, 8, final_only={"reply": "text", "finish": "summary"})
    assert_matches_golden(GOLDEN_DIR / f"tool-call.{profile.name}.gbnf", grammar)


def test_a_turn_ending_call_is_a_batch_on_its_own() -> None:
    rules = _rules(build_tool_call_grammar(["reply", "os.fs.read", "finish"], PLAIN_TEXT_PROFILE,
                                           final_only={"reply": "text", "finish": "summary"}))
    assert rules["tool-call-array"] == '"[" ws batch ws "]"'
    assert rules["batch"] == "step-calls | final-call"  # working calls, or one reply/finish after their results
    assert rules["step-tool-name"] == '"\\"os.fs.read\\""'  # reply and finish never among working calls


def test_a_turn_ending_call_carries_exactly_its_text() -> None:
    rules = _rules(build_tool_call_grammar(["reply", "os.fs.read", "custom.end"], PLAIN_TEXT_PROFILE,
                                           final_only={"reply": "text", "custom.end": None}))
    custom, reply = rules["final-call"].split(" | ")
    assert reply == ('"{" ws "\\"tool\\"" ws ":" ws "\\"reply\\"" ws "," ws "\\"args\\"" ws ":" ws '
                     '"{" ws "\\"text\\"" ws ":" ws string ws "}" ws "}"')  # {"text": "..."} and nothing else
    assert custom.endswith('ws "\\"args\\"" ws ":" ws object ws "}"')  # a terminal without one text arg: any args


def test_a_registry_of_only_turn_ending_tools_allows_exactly_one_call() -> None:
    rules = _rules(build_tool_call_grammar(["reply", "finish"], PLAIN_TEXT_PROFILE,
                                           final_only={"reply": "text", "finish": "summary"}))
    assert rules["batch"] == "final-call"
    assert not {"step-calls", "step-call", "step-tool-name"} & set(rules)  # no rule may name an undefined one


def test_a_tool_that_asks_for_approval_is_a_batch_on_its_own() -> None:
    rules = _rules(build_tool_call_grammar(["reply", "os.fs.read", "os.fs.write"], PLAIN_TEXT_PROFILE,
                                           final_only={"reply": "text"}, alone=["os.fs.write"]))
    assert rules["batch"] == "step-calls | lone-call | final-call"
    assert rules["step-tool-name"] == '"\\"os.fs.read\\""'  # never batched with the write
    assert rules["lone-tool-name"] == '"\\"os.fs.write\\""'
    assert rules["lone-call"] == '"{" ws "\\"tool\\"" ws ":" ws lone-tool-name ws "," ws "\\"args\\"" ws ":" ws object ws "}"'
