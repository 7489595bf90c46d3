"""openai-compatible against a real llama-server's /v1/chat/completions.

Plain replies use the shared `llama_server` fixture (the starter model's own template
drops `tools`, so the answer is prose and `tool_calls` is empty). Tool calls use a second
server with a tools-capable template plus the recipe the tiny model needs:
`tool_choice: "required"` and a prefilled `<tool_call>\\n` assistant message.
"""

from __future__ import annotations

import json

import pytest

from atomic_agent.agent.step_executor import batch_from_native_calls
from atomic_agent.agent.tool_calls import parse_tool_calls
from atomic_agent.api import CompletionRequest, ResourceClass, ToolSpec
from atomic_agent.llm.model_profile import PLAIN_TEXT_PROFILE
from atomic_agent.plugins.openai_compatible.endpoint_entry import resolve_endpoint
from atomic_agent.plugins.openai_compatible.openai_provider import OpenAiCompatibleProvider
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import collected_tools, fresh_plugin_host, registered_plugin

pytestmark = pytest.mark.llama_server
PREFIX = "You are a terse assistant. Answer in one short sentence.\n"


def provider_for(base_url: str, **entry) -> OpenAiCompatibleProvider:
    ep = resolve_endpoint({"id": "llama-v1", "kind": "openai-compatible", "preset": "llamacpp",
                           "baseUrl": base_url + "/v1", "model": "smollm2", "maxTokens": 96, "temperature": 0,
                           **entry}, {})
    return OpenAiCompatibleProvider(ep)


def tools():
    return tuple(collected_tools(fresh_plugin_host(), runtime=None))


def request(text: str, **kw) -> CompletionRequest:
    return CompletionRequest(prompt=PREFIX + text, prefix_length=len(PREFIX), tools=tools(), n_predict=96, seed=1, **kw)


async def test_plain_reply_comes_back_as_content_with_empty_tool_calls(llama_server):
    provider = provider_for(llama_server.base_url)
    try:
        done = await provider.complete(request("Say hello.", stream=False))
    finally:
        await provider.close()
    assert done.tool_calls == () and done.content.strip()
    assert done.usage["promptTokens"] > 0 and done.tokens_predicted > 0
    assert batch_from_native_calls(done).calls[0].tool == "reply"


async def test_plain_reply_streams_deltas(llama_server):
    provider = provider_for(llama_server.base_url)
    deltas: list[str] = []
    try:
        done = await provider.complete(request("Say hello.", stream=True), deltas.append)
    finally:
        await provider.close()
    assert len(deltas) > 1 and "".join(deltas) == done.content
    assert done.usage.get("promptTokens", 0) > 0  # the include_usage chunk arrived


async def test_repeated_system_prefix_is_served_from_the_servers_cache(llama_server):
    provider = provider_for(llama_server.base_url, extraBody={"cache_prompt": True, "id_slot": 1})
    try:
        await provider.complete(request("Say hi.", stream=False))
        second = await provider.complete(request("Say bye.", stream=False))
    finally:
        await provider.close()
    assert second.cache_n > 0  # the byte-stable system message is reused


async def _noop(args, ctx):  # pragma: no cover
    raise AssertionError


READ = ToolSpec("os.fs.read", "Read a text file and return its contents.",
                {"type": "object", "properties": {"path": {"type": "string", "description": "path of the file"}},
                 "required": ["path"]}, ResourceClass.PURE_READ, _noop)
TOOL_PREFIX = "You are an agent that uses tools.\n"
OFFERED = {"os.fs.read", "reply", "finish"}


def tool_request(stream: bool) -> CompletionRequest:
    return CompletionRequest(prompt=TOOL_PREFIX + "Read the file notes.txt", prefix_length=len(TOOL_PREFIX),
                             tools=(READ,), n_predict=128, seed=1, stream=stream)


async def test_tool_calls_map_back_to_registry_names(tool_template_server):
    provider = provider_for(tool_template_server.base_url, toolChoice="required", assistantPrefill="<tool_call>\n",
                            maxTokens=128)
    try:
        done = await provider.complete(tool_request(stream=False))
    finally:
        await provider.close()
    assert done.tool_calls, done.raw
    assert all(name in OFFERED for name, _ in done.tool_calls)
    assert len({json.dumps(c, sort_keys=True) for c in done.tool_calls}) == len(done.tool_calls)  # deduplicated


async def test_streamed_tool_calls_are_reassembled(tool_template_server):
    provider = provider_for(tool_template_server.base_url, toolChoice="required", assistantPrefill="<tool_call>\n",
                            maxTokens=128)
    try:
        done = await provider.complete(tool_request(stream=True), lambda _t: None)
    finally:
        await provider.close()
    assert done.tool_calls and all(name in OFFERED for name, _ in done.tool_calls)


def _short_answer_grammar(grammar: str) -> str:
    """The shipped grammar with strings and objects tightened: the tiny model can ramble for
    6,000 characters inside one string, which would make this transport test depend on luck."""
    tightened = grammar.replace("char{0,6000}", "char{0,48}").replace("){0,31}", "){0,1}")
    assert tightened != grammar
    return tightened


async def test_grammar_transport_over_the_openai_endpoint_parses_as_tool_calls(llama_server):
    from atomic_agent.prompt.build_grammar import build_tool_call_grammar

    names = ["reply", "finish"]
    prefix = ('Answer with a JSON array of tool calls. To answer the user, call reply: '
              '[{"tool": "reply", "args": {"text": "your answer"}}]\n')
    provider = provider_for(llama_server.base_url, toolTransport="grammar", maxTokens=200)
    try:
        done = await provider.complete(CompletionRequest(
            prompt=prefix + "user: Say hello.", prefix_length=len(prefix), n_predict=200, seed=1, stream=False,
            grammar=_short_answer_grammar(build_tool_call_grammar(names, PLAIN_TEXT_PROFILE, 2))))
    finally:
        await provider.close()
    assert done.tool_calls is None and done.stop_type == "eos", done.content
    batch = parse_tool_calls(done.content, PLAIN_TEXT_PROFILE, prefilled_open=False)
    assert batch.calls and all(c.tool in names for c in batch.calls)


async def test_a_turn_completes_through_the_openai_compatible_kind(llama_server, tmp_path):
    import atomic_agent.plugins.openai_compatible as openai_plugin

    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"version": 2, "llm": {"providers": [
        {"id": "llama-v1", "kind": "openai-compatible", "preset": "llamacpp", "baseUrl": llama_server.base_url + "/v1",
         "model": "smollm2", "maxTokens": 128}]}}))
    env = {"ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "3"}
    host = fresh_plugin_host()
    events: list[dict] = []
    with registered_plugin(host, openai_plugin, "openai_compatible"):
        rt = Runtime(boot(state, environ=dict(env), host=host), environ=env)
        result = await rt.run_turn("Say hello.", working_dir=tmp_path, on_event=events.append)
        await rt.close()
    assert result.status == "done", [e for e in events if e["type"] in ("step_error", "loop_failed")]
    assert result.reply.strip()
    usage = [json.loads(line) for line in (state / "traces" / f"{result.session_id}.ndjson").read_text().splitlines()
             if '"llm_usage"' in line]
    assert usage and usage[0]["provider"] == "llama-v1" and usage[0]["promptTokens"] > 0
