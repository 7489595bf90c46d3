"""Class: a lone surrogate in the model's reply. It once surfaced as `[tool] UnicodeEncodeError`,
an HTTP 500 from serve and a scheduled task that failed on every run. Bad model text is a
model-output problem: it is repaired at the provider boundary (U+FFFD), so `run`, `serve`
and a scheduled task all finish with the rest of the reply intact."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from atomic_agent.llm.model_text import repair_completion, repair_text
from atomic_agent.llm.provider_protocol import Completion
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import ServeHarness
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import replies

# (what the model sent, the reply that must reach the user): escaped in the JSON, raw in the
# text, at either end, a lone low half, and a pair split over two code points (joined)
SPELLINGS = [
    (calls(("reply", {"text": "\ud800"})), "\ufffd"),
    (calls(("reply", {"text": "bad \udfff end"})), "bad \ufffd end"),
    ('[{"tool": "reply", "args": {"text": "raw \ud800 in the text"}}]', "raw \ufffd in the text"),
    ('[{"tool": "reply", "args": {"text": "tail\\udc80"}}]', "tail\ufffd"),
    ('[{"tool": "reply", "args": {"text": "pair \\ud83d\\ude00 ok, lone \\ud83d"}}]', "pair \U0001f600 ok, lone \ufffd"),
]


def _native(text: str) -> Completion:
    return Completion(content="", tool_calls=(("reply", {"text": text}),))


@pytest.mark.parametrize(("raw", "expected"), SPELLINGS)
async def test_run_a_lone_surrogate_in_the_reply_is_repaired_not_a_tool_failure(tmp_path: Path, raw: str,
                                                                                expected: str) -> None:
    runtime = make_runtime(tmp_path, ScriptedProvider([raw]))
    try:
        result = await runtime.run_turn("hello")
        assert (result.status, result.category, result.error) == ("done", None, None), result
        assert result.reply == expected
        assert replies(runtime, result.session_id) == [expected]  # stored, so it encodes as UTF-8
        expected.encode("utf-8")
    finally:
        await runtime.close()


async def test_run_native_tool_calls_with_a_lone_surrogate_are_repaired(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, ScriptedProvider([_native("x\ud800y")], transport="native_tools"))
    try:
        result = await runtime.run_turn("hello")
        assert (result.status, result.reply) == ("done", "x\ufffdy"), result
    finally:
        await runtime.close()


@pytest.mark.parametrize(("raw", "expected"), SPELLINGS[:3])
def test_serve_a_lone_surrogate_in_the_reply_is_a_200_not_a_500(tmp_path: Path, raw: str, expected: str) -> None:
    harness = ServeHarness(tmp_path, ScriptedProvider([raw, raw]))
    try:
        body = {"messages": [{"role": "user", "content": "hello"}]}
        plain = httpx.post(f"{harness.base_url}/v1/chat/completions", json=body, timeout=60)
        streamed = httpx.post(f"{harness.base_url}/v1/chat/completions", json={**body, "stream": True}, timeout=60)
    finally:
        harness.stop()
    assert plain.status_code == 200, plain.text
    assert plain.json()["choices"][0]["message"]["content"] == expected
    assert streamed.status_code == 200, streamed.text
    pieces = [json.loads(line[6:]) for line in streamed.text.splitlines()
              if line.startswith("data: ") and line != "data: [DONE]"]
    text = "".join((p["choices"][0]["delta"].get("content") or "") for p in pieces if p.get("choices"))
    assert "\ufffd" in text and "error" not in streamed.text.lower()


@pytest.mark.parametrize(("raw", "expected"), SPELLINGS[:2])
async def test_scheduled_task_a_lone_surrogate_in_the_reply_completes_the_task(tmp_path: Path, raw: str,
                                                                               expected: str) -> None:
    runtime = await task_runtime(tmp_path, ScriptedProvider([raw]), FakeClock())
    try:
        tasks = runtime.service("tasks")
        task = tasks.create("say something odd")
        await tasks.tick()
        stored = tasks.store.get(task.id)
        assert stored.status == "completed", stored
        assert [run.status for run in tasks.store.runs(task.id)] == ["completed"]
    finally:
        await runtime.close()


def test_repair_leaves_good_text_alone_and_joins_split_pairs() -> None:
    good = Completion(content="plain ☃ \U0001f600 text")
    assert repair_completion(good) is good
    assert repair_text("\ud83d\ude00") == "\U0001f600"
    assert repair_text("\ude00\ud83d") == "\ufffd\ufffd"
    assert repair_completion(Completion(content="a", reasoning_content="r\ud800")).reasoning_content == "r\ufffd"
