"""Locked invariants of parallel tool calls per step (one inference, order, isolation, barrier)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import ToolLog, make_runtime


def trace_events(runtime, session_id: str) -> list[dict]:
    path = runtime.state_dir / "traces" / f"{session_id}.ndjson"
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_one_inference_per_step_for_a_batch(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}), ("t.read", {"path": "b"}), ("t.read", {"path": "c"})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("read three", working_dir=tmp_path)
    assert result.status == "done" and result.steps == 2
    assert len(provider.requests) == 2  # three tools, one inference
    await rt.close()


async def test_pure_reads_fan_out_in_parallel(tmp_path: Path):
    log = ToolLog()
    paths = [f"f{i}" for i in range(4)]
    release = log.hold(*paths)
    provider = ScriptedProvider([calls(*[("t.read", {"path": path}) for path in paths]),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, log)
    turn = asyncio.ensure_future(rt.run_turn("go", working_dir=tmp_path))
    await log.running(*paths)  # all four start while none can finish: serial reads would never get here
    release.set()
    await turn
    starts = [t for _, _, t in log.started]
    ends = [t for _, _, t in log.finished]
    assert max(starts) < min(ends)  # every read started before any finished
    await rt.close()


async def test_same_class_writes_run_serially(tmp_path: Path):
    log = ToolLog()
    provider = ScriptedProvider([calls(("t.store", {"path": "a", "ms": 30}), ("t.store", {"path": "b", "ms": 30})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, log)
    await rt.run_turn("go", working_dir=tmp_path)
    (_, _, a_end), (_, _, b_start) = log.finished[0], log.started[1]
    assert b_start >= a_end
    await rt.close()


async def test_result_order_matches_batch_index_order(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow", "ms": 120}), ("t.read", {"path": "fast", "ms": 0})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    entries = rt.sessions.load(result.session_id).entries
    results = [e for e in entries if e.kind == "tool_result"]
    assert [e.batch_index for e in results] == [0, 1]
    assert results[0].text == "contents of slow" and results[1].text == "contents of fast"
    await rt.close()


async def test_failures_isolate_siblings_keep_running(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "boom"}), ("t.read", {"path": "fine"})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    statuses = [e["status"] for e in events if e["type"] == "tool_call_result"]
    assert statuses == ["error", "ok"]
    assert result.status == "done"
    assert not any(e["type"] == "loop_failed" for e in events)  # a tool error is not an infra failure
    await rt.close()


async def test_tail_terminal_batch_runs_in_one_inference_and_reply_fires_after_error(tmp_path: Path):
    log = ToolLog()
    provider = ScriptedProvider([calls(("t.read", {"path": "boom", "ms": 50}), ("t.store", {"path": "x", "ms": 50}),
                                       ("reply", {"text": "done anyway"}))])
    rt = make_runtime(tmp_path, provider, log)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert len(provider.requests) == 1
    assert result.reply == "done anyway" and result.reason == "reply"
    reply_at = [i for i, e in enumerate(events) if e["type"] == "assistant_reply"][0]
    last_tool = max(i for i, e in enumerate(events) if e["type"] == "tool_call_result")
    assert reply_at > last_tool  # tail-terminal barrier
    await rt.close()


async def test_transcript_shape_calls_then_results_in_order_then_one_reply(tmp_path: Path):
    # the batch's calls are committed before any runs, so all calls precede all results
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}), ("t.read", {"path": "b"}), ("reply", {"text": "r"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    entries = rt.sessions.load(result.session_id).entries
    assert [e.kind for e in entries] == ["turn_started", "user", "assistant_tool_call", "assistant_tool_call",
                                         "tool_result", "tool_result", "assistant_reply", "turn_finished"]
    assert [e.batch_index for e in entries if e.kind == "tool_result"] == [0, 1]
    await rt.close()


async def test_prompt_pairs_each_call_with_its_result(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}), ("t.read", {"path": "b"})),
                                 calls(("reply", {"text": "r"}))])
    rt = make_runtime(tmp_path, provider)
    await rt.run_turn("go", working_dir=tmp_path)
    prompt = provider.requests[1].prompt
    lines = prompt[prompt.index("user: go"):].splitlines()[1:5]
    assert lines == ['assistant_tool_call: t.read {"path":"a"}', "tool_result[t.read ok]: contents of a",
                     'assistant_tool_call: t.read {"path":"b"}', "tool_result[t.read ok]: contents of b"]
    await rt.close()


async def test_terminal_mid_batch_is_rejected_then_retried(tmp_path: Path):
    provider = ScriptedProvider([calls(("reply", {"text": "early"}), ("t.read", {"path": "a"})),
                                 calls(("reply", {"text": "fixed"}))])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert [e["type"] for e in events].count("parse_retry") == 1
    assert result.reply == "fixed"
    assert provider.requests[1].stream is False  # the retry is unary
    await rt.close()


async def test_approval_gated_tool_is_refused_in_a_batch(tmp_path: Path):
    bad = calls(("t.gated", {"path": "x"}), ("t.read", {"path": "a"}))
    provider = ScriptedProvider([bad, bad])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert result.status == "failed" and result.category == "grammar"
    step_error = next(e for e in events if e["type"] == "step_error")
    assert step_error["code"] == "step_error:grammar"
    assert any(e["type"] == "loop_failed" and e["category"] == "grammar" for e in events)
    await rt.close()


async def test_duplicate_terminal_is_rejected(tmp_path: Path):
    dup = calls(("reply", {"text": "a"}), ("reply", {"text": "b"}))
    provider = ScriptedProvider([dup, calls(("reply", {"text": "one"}))])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert result.reply == "one"
    await rt.close()


async def test_batch_over_soft_cap_is_rejected(tmp_path: Path):
    many = calls(*[("t.read", {"path": str(i)}) for i in range(3)])
    provider = ScriptedProvider([many, calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, environ={"ATOMIC_AGENT_MAX_PARALLEL_TOOL_CALLS": "2"})
    events: list[dict] = []
    await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert any(e["type"] == "parse_retry" and "maxParallelToolCalls=2" in e["reason"] for e in events)
    await rt.close()


async def test_solo_gated_tool_runs_and_asks(tmp_path: Path):
    asked: list = []

    async def ask(request):
        asked.append(request)
        return True

    provider = ScriptedProvider([calls(("t.gated", {"path": "x"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, ask=ask)
    events: list[dict] = []
    await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    assert asked and asked[0].category == "shell" and asked[0].label == "shell command"
    assert [e["status"] for e in events if e["type"] == "tool_call_result"] == ["ok"]
    await rt.close()


async def test_batch_metadata_only_when_batch_has_more_than_one_call(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})),
                                 calls(("t.read", {"path": "b"}), ("t.read", {"path": "c"})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider)
    events: list[dict] = []
    result = await rt.run_turn("go", working_dir=tmp_path, on_event=events.append)
    started = [e for e in events if e["type"] == "tool_call_started"]
    assert "batchSize" not in started[0]
    assert [(e["batchIndex"], e["batchSize"]) for e in started[1:]] == [(0, 2), (1, 2)]
    invocations = [e for e in trace_events(rt, result.session_id) if e["type"] == "tool_invocation"]
    assert len(invocations) == 3  # per-step trace = N tool_invocation events
    assert "batchIndex" not in invocations[0] and invocations[2]["batchSize"] == 2
    await rt.close()


async def test_combined_result_cap_trims_oldest_summaries_first(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.huge", {"path": "a"}), ("t.read", {"path": "b"})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, environ={"ATOMIC_AGENT_BATCH_TOOL_RESULT_CHAR_CAP": "600"})
    await rt.run_turn("go", working_dir=tmp_path)
    # the cap applies where results are rendered: each is committed before its siblings exist
    prompt = provider.requests[1].prompt
    results = [line.split("]: ", 1)[1] for line in prompt.splitlines() if line.startswith("tool_result[")]
    assert "trimmed" in results[0]
    assert results[1] == "contents of b"  # the newest kept whole
    assert sum(len(r) for r in results) <= 600
    await rt.close()


async def test_cross_session_turns_run_in_parallel(tmp_path: Path):
    log = ToolLog()
    release = log.hold("s1", "s2")
    provider = ScriptedProvider([calls(("t.read", {"path": "s1"})), calls(("t.read", {"path": "s2"}))],
                                default=calls(("reply", {"text": "ok"})))
    rt = make_runtime(tmp_path, provider, log)
    a, b = rt.open_session(None, tmp_path), rt.open_session(None, tmp_path)
    turns = asyncio.gather(rt.run_turn("one", session_id=a.id), rt.run_turn("two", session_id=b.id))
    await log.running("s1", "s2")  # neither read ends before both sessions' have started
    release.set()
    await turns
    starts = sorted(t for _, _, t in log.started)
    ends = sorted(t for _, _, t in log.finished)
    assert starts[1] < ends[0]
    await rt.close()
