"""Tools as OpenAI functions and tool_calls back to registry names (guide invariants 3 and 6)."""

from __future__ import annotations

import json

import pytest

from atomic_agent.agent.step_executor import batch_from_native_calls
from atomic_agent.agent.tool_calls import parse_tool_calls
from atomic_agent.api import Completion, ResourceClass, ToolSpec
from atomic_agent.llm.model_profile import PLAIN_TEXT_PROFILE
from atomic_agent.plugins.openai_compatible.tool_functions import (
    MalformedToolCallError,
    escape_name,
    map_tool_calls,
    parse_arguments,
    tools_payload,
    unescape_name,
)
from atomic_agent.reliability.failure_taxonomy import classify_failure
from atomic_agent.testing.runtime_kit import collected_tools

READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"],
               "additionalProperties": False}


async def _noop(args, ctx):  # pragma: no cover - never run
    raise AssertionError


def spec(name: str, schema=READ_SCHEMA) -> ToolSpec:
    return ToolSpec(name, f"{name} summary", schema, ResourceClass.PURE_READ, _noop)


def test_dots_are_escaped_as_double_underscores_and_mapped_back():
    assert escape_name("os.fs.read") == "os__fs__read"
    assert unescape_name("os__fs__read") == "os.fs.read"
    tools, offered = tools_payload([spec("os.fs.read")])
    assert tools[0]["function"]["name"] == "os__fs__read"
    assert offered["os__fs__read"] == "os.fs.read"


def test_reply_and_finish_are_offered_as_synthetic_functions():
    tools, _ = tools_payload([spec("os.fs.read")])
    names = [t["function"]["name"] for t in tools]
    assert names == ["os__fs__read", "reply", "finish"]
    reply = next(t for t in tools if t["function"]["name"] == "reply")
    assert reply["function"]["parameters"]["required"] == ["text"]


def test_registry_reply_is_not_offered_twice():
    tools, _ = tools_payload([spec("reply"), spec("finish")])
    assert [t["function"]["name"] for t in tools] == ["reply", "finish"]


def test_every_registered_tool_schema_becomes_function_parameters_verbatim(tmp_path):
    from atomic_agent.testing.runtime_kit import installed_plugin_host
    from atomic_agent.testing.tool_context_kit import make_runtime_view

    specs = collected_tools(installed_plugin_host(), runtime=make_runtime_view(tmp_path))
    assert specs
    tools, _ = tools_payload(specs)
    by_name = {t["function"]["name"]: t["function"]["parameters"] for t in tools}
    for s in specs:
        assert s.args_schema, f"{s.name} ships no args schema"
        assert by_name[escape_name(s.name)] == dict(s.args_schema)


def test_arguments_json_string_and_double_serialised_string_both_parse():
    assert parse_arguments('{"path": "a.txt"}', "f") == {"path": "a.txt"}
    assert parse_arguments(json.dumps('{"path": "a.txt"}'), "f") == {"path": "a.txt"}
    assert parse_arguments({"path": "a"}, "f") == {"path": "a"}
    assert parse_arguments("", "f") == {}


def test_non_object_arguments_are_a_grammar_failure():
    with pytest.raises(MalformedToolCallError) as info:
        parse_arguments("[1, 2]", "os__fs__read")
    assert classify_failure(info.value).category == "grammar"
    with pytest.raises(MalformedToolCallError):
        parse_arguments("{not json", "f")


def test_identical_duplicate_calls_are_dropped():
    calls = [("os__fs__read", '{"path": "a"}'), ("os__fs__read", '{\n "path": "a"\n}'),
             ("os__fs__read", '{"path": "b"}')]
    assert map_tool_calls(calls, {"os__fs__read": "os.fs.read"}) == (
        ("os.fs.read", {"path": "a"}), ("os.fs.read", {"path": "b"}))


def test_native_calls_map_to_the_same_batch_shape_as_grammar_output():
    grammar_text = json.dumps([{"tool": "os.fs.read", "args": {"path": "a"}}, {"tool": "reply", "args": {"text": "ok"}}])
    grammar_batch = parse_tool_calls(grammar_text, PLAIN_TEXT_PROFILE, prefilled_open=False)
    native = map_tool_calls([("os__fs__read", '{"path": "a"}'), ("reply", '{"text": "ok"}')],
                            {"os__fs__read": "os.fs.read", "reply": "reply"})
    native_batch = batch_from_native_calls(Completion(content="", tool_calls=native))
    assert native_batch.calls == grammar_batch.calls


def test_a_last_call_cut_by_the_token_limit_is_dropped_after_complete_ones():
    calls = [("reply", '{"text": "hi"}'), ("reply", '{"text": "hi th')]
    assert map_tool_calls(calls, {}, cut_by_limit=True) == (("reply", {"text": "hi"}),)
    with pytest.raises(MalformedToolCallError):
        map_tool_calls(calls, {})
    with pytest.raises(MalformedToolCallError):
        map_tool_calls([("reply", '{"text": "hi th')], {}, cut_by_limit=True)
