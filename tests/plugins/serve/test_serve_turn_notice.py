"""A plugin's end-of-turn notice (the worktree diffstat's shape) reaches an HTTP client: as
`turn_notices` beside the reply of a non-streaming completion (the content stays the reply
alone), and as a named `turn_notice` SSE event in a stream with extensions."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime
from tests.agent.turn_notice_kit import NOTICE, NoticePlugin
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

HI = [{"role": "user", "content": "edit"}]


def serve_with_notice(tmp_path: Path, replies: int) -> ServeHarness:
    provider = ScriptedProvider([calls(("reply", {"text": "edited"}))] * replies)
    return ServeHarness(tmp_path, runtime_factory=lambda ask: make_runtime(tmp_path, provider, ask=ask,
                                                                           extra=[(NoticePlugin(), "notice")]))


def test_a_completion_carries_the_turn_notice_beside_the_reply(tmp_path: Path) -> None:
    serve = serve_with_notice(tmp_path, 1)
    try:
        body = httpx.post(f"{serve.base_url}/v1/chat/completions", json={"model": "m", "messages": HI},
                          timeout=WAIT_S).json()
    finally:
        serve.stop()
    assert body["choices"][0]["message"]["content"] == "edited"
    assert body["turn_notices"] == [{"source": "t-notice", "text": NOTICE}]


def test_a_stream_with_extensions_gets_a_turn_notice_event_after_the_reply(tmp_path: Path) -> None:
    serve = serve_with_notice(tmp_path, 1)
    try:
        with httpx.stream("POST", f"{serve.base_url}/v1/chat/completions",
                          json={"model": "m", "messages": HI, "stream": True},
                          headers={"X-Atomic-Extensions": "events"}, timeout=WAIT_S) as response:
            text = "".join(response.iter_text())
    finally:
        serve.stop()
    names = [line.removeprefix("event: ") for line in text.splitlines() if line.startswith("event: ")]
    assert names.index("assistant_reply") < names.index("turn_notice") < names.index("turn_finished")
    frame = text.split("event: turn_notice\n", 1)[1].split("\n\n", 1)[0]
    assert json.loads(frame.removeprefix("data: "))["text"] == NOTICE
