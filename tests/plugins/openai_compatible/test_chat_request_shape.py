"""What goes over the wire: the prompt split at the stable prefix, tools, prefill, grammar."""

from __future__ import annotations

from atomic_agent.api import CompletionRequest, ResourceClass, ToolSpec

from .vendor_server import Reply, chat_reply, sse_chunks

PREFIX = "You are the agent.\n### tools\nos.fs.read ...\n"
TAIL = "### conversation\nuser: hi\n"


async def _noop(args, ctx):  # pragma: no cover
    raise AssertionError


READ = ToolSpec("os.fs.read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}},
                ResourceClass.PURE_READ, _noop)


def request(**kw) -> CompletionRequest:
    return CompletionRequest(prompt=PREFIX + TAIL, prefix_length=len(PREFIX), stream=False, **kw)


async def test_prompt_is_split_into_system_prefix_and_user_tail_byte_for_byte(vendor, make_provider):
    provider = make_provider()
    await provider.complete(request(tools=(READ,)))
    messages = vendor.seen[0].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    assert messages[0]["content"] + messages[1]["content"] == PREFIX + TAIL  # the stable prefix is untouched
    assert messages[0]["content"] == PREFIX


async def test_stable_prefix_is_identical_across_steps(vendor, make_provider):
    provider = make_provider()
    await provider.complete(request())
    await provider.complete(CompletionRequest(prompt=PREFIX + TAIL + "assistant: x\n", prefix_length=len(PREFIX),
                                              stream=False))
    assert vendor.seen[0].body["messages"][0] == vendor.seen[1].body["messages"][0]


async def test_without_a_prefix_length_the_whole_prompt_is_the_user_message(vendor, make_provider):
    await make_provider().complete(CompletionRequest(prompt="just this", stream=False))
    assert vendor.seen[0].body["messages"] == [{"role": "user", "content": "just this"}]


async def test_native_request_offers_tools_with_tool_choice_and_auth(vendor, make_provider):
    await make_provider(toolChoice="required").complete(request(tools=(READ,), n_predict=64, seed=3))
    seen = vendor.seen[0]
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["Authorization"] == "Bearer sk-test-123"
    body = seen.body
    assert [t["function"]["name"] for t in body["tools"]] == ["os__fs__read", "reply", "finish"]
    assert body["tool_choice"] == "required" and body["max_tokens"] == 64 and body["seed"] == 3
    assert body["model"] == "m-1" and "grammar" not in body


async def test_assistant_prefill_is_sent_as_a_final_assistant_message(vendor, make_provider):
    await make_provider(assistantPrefill="<tool_call>\n").complete(request(tools=(READ,)))
    assert vendor.seen[0].body["messages"][-1] == {"role": "assistant", "content": "<tool_call>\n"}


async def test_grammar_transport_sends_the_gbnf_and_no_tools(vendor, make_provider):
    vendor.script(chat_reply('[{"tool": "reply", "args": {"text": "ok"}}]'))
    done = await make_provider(toolTransport="grammar").complete(request(grammar="root ::= \"x\""))
    body = vendor.seen[0].body
    assert body["grammar"] == 'root ::= "x"' and "tools" not in body
    assert done.tool_calls is None  # parsed by the grammar path


async def test_extra_body_and_max_tokens_cap_apply(vendor, make_provider):
    await make_provider(maxTokens=32, extraBody={"top_p": 0.5}).complete(request(n_predict=900))
    body = vendor.seen[0].body
    assert body["max_tokens"] == 32 and body["top_p"] == 0.5


async def test_tool_calls_come_back_under_registry_names_with_usage_and_cost(vendor, make_provider):
    vendor.script(chat_reply("", tool_calls=[
        {"id": "c1", "type": "function", "function": {"name": "os__fs__read", "arguments": '{"path": "a.txt"}'}},
        {"id": "c2", "type": "function", "function": {"name": "os__fs__read", "arguments": '{"path": "a.txt"}'}}],
        finish="tool_calls", usage={"prompt_tokens": 1000, "completion_tokens": 50,
                                    "prompt_tokens_details": {"cached_tokens": 600}}))
    provider = make_provider(pricing={"promptPerM": 1.0, "completionPerM": 4.0, "cachedPromptPerM": 0.25})
    done = await provider.complete(request(tools=(READ,)))
    assert done.tool_calls == (("os.fs.read", {"path": "a.txt"}),)
    assert done.usage == {"model": "m-1", "promptTokens": 1000, "completionTokens": 50, "cachedTokens": 600,
                          "costUsd": round((400 * 1.0 + 600 * 0.25 + 50 * 4.0) / 1e6, 8)}
    assert done.cache_n == 600 and done.prompt_n == 400


async def test_vendor_reported_cost_wins_over_the_price_table(vendor, make_provider):
    vendor.script(chat_reply("hi", usage={"prompt_tokens": 10, "completion_tokens": 1, "cost": 0.0042}))
    done = await make_provider(pricing={"promptPerM": 9.0, "completionPerM": 9.0}).complete(request())
    assert done.usage["costUsd"] == 0.0042


async def test_plain_content_answer_has_empty_tool_calls(vendor, make_provider):
    vendor.script(chat_reply("Hello there"))
    done = await make_provider().complete(request(tools=(READ,)))
    assert done.tool_calls == () and done.content == "Hello there"


async def test_length_finish_is_a_truncated_completion(vendor, make_provider):
    vendor.script(chat_reply("partial", finish="length"))
    done = await make_provider().complete(request())
    assert done.truncated and done.stop_type == "limit"


async def test_streamed_content_is_forwarded_and_usage_kept(vendor, make_provider):
    vendor.script(Reply(sse=sse_chunks(["Hel", "lo"], usage={"prompt_tokens": 5, "completion_tokens": 2})))
    deltas: list[str] = []
    done = await make_provider().complete(CompletionRequest(prompt="p", stream=True), deltas.append)
    assert deltas == ["Hel", "lo"] and done.content == "Hello"
    assert done.usage["promptTokens"] == 5
    assert vendor.seen[0].body["stream"] is True and vendor.seen[0].body["stream_options"] == {"include_usage": True}


async def test_streamed_tool_call_fragments_are_reassembled(vendor, make_provider):
    import json

    frags = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "x", "type": "function",
                                                             "function": {"name": "os__fs__read", "arguments": "{"}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"path": "b"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "y", "type": "function",
                                                             "function": {"name": "reply",
                                                                          "arguments": '{"text": "ok"}'}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    vendor.script(Reply(sse=[json.dumps(f) for f in frags] + ["[DONE]"]))
    done = await make_provider().complete(CompletionRequest(prompt="p", stream=True, tools=(READ,)), lambda _t: None)
    assert done.tool_calls == (("os.fs.read", {"path": "b"}), ("reply", {"text": "ok"}))
