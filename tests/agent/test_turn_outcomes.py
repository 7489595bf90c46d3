"""Every way a turn can end: reply, finish, graceful loop reply, categorised failures, cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.api import ProviderError, ProviderUnavailableError
from atomic_agent.llm.provider_protocol import Completion
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime, until


async def test_reply_ends_the_turn_and_finish_ends_the_session(tmp_path: Path):
    provider = ScriptedProvider([calls(("reply", {"text": "hi"})), calls(("finish", {"summary": "bye"}))])
    rt = make_runtime(tmp_path, provider)
    first = await rt.run_turn("hello", working_dir=tmp_path)
    assert first.reason == "reply" and rt.sessions.load(first.session_id).status == "pending"
    second = await rt.run_turn("that's all", session_id=first.session_id)
    assert second.reason == "finish" and second.turn_index == 1
    assert rt.sessions.load(first.session_id).status == "finished"
    await rt.close()


async def test_session_is_multi_turn_and_sees_earlier_turns(tmp_path: Path):
    provider = ScriptedProvider([calls(("reply", {"text": "first answer"})), calls(("reply", {"text": "second"}))])
    rt = make_runtime(tmp_path, provider)
    first = await rt.run_turn("question one", working_dir=tmp_path)
    await rt.run_turn("question two", session_id=first.session_id)
    prompt = provider.requests[1].prompt
    assert "user: question one" in prompt and "assistant: first answer" in prompt and "user: question two" in prompt
    await rt.close()


async def test_breaker_ends_the_turn_with_a_graceful_reply_not_loop_failed(tmp_path: Path):
    same = calls(("t.read", {"path": "a"}))
    provider = ScriptedProvider([], default=same)
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("loop forever", working_dir=tmp_path, on_event=events.append)
    assert result.status == "done" and result.reason == "reply" and result.reply
    assert not any(e["type"] in ("loop_failed", "step_error") for e in events)
    levels = [e["level"] for e in events if e["type"] == "loop_detected"]
    assert "warn" in levels and "critical" in levels
    entries = rt.sessions.load(result.session_id).entries
    assert entries[-2].kind == "assistant_reply"
    await rt.close()


async def test_parse_failure_retries_once_then_grammar_error_with_preview(tmp_path: Path):
    provider = ScriptedProvider(["not json at all", "still not json"])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert len(provider.requests) == 2 and provider.requests[1].prompt == provider.requests[0].prompt
    assert provider.requests[1].slot_id == provider.requests[0].slot_id
    assert result.status == "failed" and result.category == "grammar"
    assert [e["type"] for e in events].count("parse_retry") == 1
    await rt.close()


async def test_model_failure_is_never_retried_in_place(tmp_path: Path):
    provider = ScriptedProvider([Completion(content='[{"tool": "reply", "args": {"te', stop=True, stop_type="limit")])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.category == "model" and len(provider.requests) == 1
    assert rt.sessions.load(result.session_id).entries[-1].reason == "model"
    await rt.close()


async def test_empty_completion_is_a_model_failure(tmp_path: Path):
    rt = make_runtime(tmp_path, ScriptedProvider([Completion(content="  ")]))
    assert (await rt.run_turn("go", working_dir=tmp_path)).category == "model"
    await rt.close()


async def test_http_400_bad_grammar_is_a_grammar_failure(tmp_path: Path):
    err = ProviderError("Failed to initialize samplers: failed to parse grammar", status=400,
                        error_type="invalid_request_error")
    rt = make_runtime(tmp_path, ScriptedProvider([err]))
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.status == "failed" and result.category == "grammar"
    await rt.close()


async def test_server_down_emits_llm_unavailable_with_mode_and_hint(tmp_path: Path):
    rt = make_runtime(tmp_path, ScriptedProvider([ProviderUnavailableError("connection refused", status=None)]))
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert result.category == "transport"
    unavailable = next(e for e in events if e["type"] == "llm_unavailable")
    assert unavailable["mode"] == "scripted" and unavailable["hint"]
    # the accepted message is kept even though the server was down
    assert [e.kind for e in rt.sessions.load(result.session_id).entries][:2] == ["turn_started", "user"]
    await rt.close()


async def test_unregistered_tool_is_a_tool_failure_without_retry(tmp_path: Path):
    provider = ScriptedProvider([calls(("no.such.tool", {}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.category == "tool" and len(provider.requests) == 1
    await rt.close()


async def test_invalid_args_are_an_error_result_and_the_turn_continues(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"wrong": 1})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    res = next(e for e in events if e["type"] == "tool_call_result")
    assert res["status"] == "error" and "path" in res["summary"]
    assert result.status == "done"
    await rt.close()


async def test_hanging_tool_times_out_as_an_error_result(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.hang", {"path": "x"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, environ={"ATOMIC_AGENT_TOOL_TIMEOUT_S": "1"})
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert result.status == "done"
    assert "did not finish within 1 s" in next(e for e in events if e["type"] == "tool_call_result")["summary"]
    await rt.close()


async def test_huge_non_utf8_output_is_capped_and_cleaned(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.huge", {"path": "x"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    tool_result = next(e for e in rt.sessions.load(result.session_id).entries if e.kind == "tool_result")
    assert len(tool_result.text) < 2000 and "truncated" in tool_result.text
    tool_result.text.encode("utf-8")  # valid UTF-8 all the way
    assert len(provider.requests[1].prompt) < 20000
    await rt.close()


async def test_cancellation_ends_the_turn_as_cancelled_not_failed(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.hang", {"path": "x"}))])
    rt = make_runtime(tmp_path, provider)
    cancelled = asyncio.Event()
    events: list[dict] = []
    task = asyncio.ensure_future(rt.run_turn("go", working_dir=tmp_path, cancelled=cancelled, on_event=events.append))
    await until(lambda: any(e["type"] == "tool_call_started" for e in events))
    cancelled.set()
    result = await asyncio.wait_for(task, 30)  # a hung-test limit
    assert result.status == "cancelled" and result.reason == "cancelled"
    assert not any(e["type"] in ("step_error", "loop_failed") for e in events)
    entries = rt.sessions.load(result.session_id).entries
    assert next(e for e in entries if e.kind == "tool_result").status == "cancelled"
    await rt.close()


async def test_max_steps_ends_with_a_graceful_reply(tmp_path: Path):
    script = [calls(("t.read", {"path": str(i)})) for i in range(5)]
    rt = make_runtime(tmp_path, ScriptedProvider(script, default=calls(("t.read", {"path": "more"}))),
                      environ={"ATOMIC_AGENT_MAX_STEPS": "3"})
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.status == "done" and result.reason == "max_steps" and "3 steps" in result.reply
    await rt.close()


async def test_native_tool_calls_map_to_the_same_batch_shape(tmp_path: Path):
    native = Completion(content="", tool_calls=(("t.read", {"path": "a"}), ("t.read", {"path": "b"})))
    provider = ScriptedProvider([native, Completion(content="", tool_calls=(("reply", {"text": "native ok"}),))],
                                transport="native_tools")
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.reply == "native ok" and len(provider.requests) == 2
    assert provider.requests[0].grammar is None and {t.name for t in provider.requests[0].tools} >= {"t.read", "reply"}
    kinds = [e.kind for e in rt.sessions.load(result.session_id).entries]
    assert kinds.count("assistant_tool_call") == 2 and kinds.count("assistant_reply") == 1
    await rt.close()


async def test_native_prose_answer_is_read_as_a_reply(tmp_path: Path):
    provider = ScriptedProvider([Completion(content="Just text.", tool_calls=())], transport="native_tools")
    rt = make_runtime(tmp_path, provider)
    assert (await rt.run_turn("go", working_dir=tmp_path)).reply == "Just text."
    await rt.close()
