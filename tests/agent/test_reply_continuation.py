"""A reply the token limit cuts is continued, not failed (issue 35: a long Telegram answer
failed with `Turn failed [model]` at llama.maxTokens 512).

Through the real `atomic-agent run` against the fake llama-server (it cuts a completion at
`n_predict` like the real server and answers each continuation from its script), the
continuation grammar against the real llama-server, and the pieces that decide when to
continue."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from atomic_agent.agent.reply_continuation import (
    MAX_CONTINUATIONS,
    WINDOW_CUT_NOTE,
    continuation_grammar,
    open_reply_text,
)
from atomic_agent.plugins.llama_server.testing.fake_llama_server import CHARS_PER_TOKEN, FakeLlamaServer
from atomic_agent.prompt.build_grammar import tool_call_grammar_source
from tests.cli.run_cli import run_cli

MAX_TOKENS = 40
PIECE = MAX_TOKENS * CHARS_PER_TOKEN  # what one completion can hold
QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
         "llama": {"maxTokens": MAX_TOKENS}}


def _pieces(answer: str) -> list[str]:
    """What the fake must answer so that each completion, cut at n_predict, is the next piece."""
    return [answer[i:] for i in range(0, len(answer), PIECE)]


def _run(tmp_path: Path, fake: FakeLlamaServer) -> object:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps(QUIET))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
    return run_cli(["--state-dir", str(state), "run", "write the long report"], env=env, timeout=120)


def test_a_reply_cut_by_the_token_limit_is_continued_to_its_end(tmp_path: Path):
    text = " ".join(f"Line {i}: the build of part {i} passed, with \\\"quotes\\\" kept." for i in range(18))
    answer = json.dumps([{"tool": "reply", "args": {"text": "x"}}], separators=(",", ":")).replace(
        '"x"', '"' + text + '"')
    assert 5 * PIECE < len(answer) < MAX_CONTINUATIONS * PIECE
    with FakeLlamaServer(script=_pieces(answer)) as fake:
        result = _run(tmp_path, fake)
        bodies = fake.completion_bodies
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == json.loads(answer)[0]["args"]["text"]
    assert len(bodies) == len(_pieces(answer))  # the first request, then one continuation per piece
    # the trace keeps each completion as the model gave it: a rerun answers the same requests in order
    from atomic_agent.runtime.trace_replay import rerun_trace_async

    traces = sorted((tmp_path / "state" / "traces").glob("*.ndjson"))
    events = [json.loads(line) for line in traces[0].read_text().splitlines()]
    pieces = [e.get("continuation", 0) for e in events if e["type"] == "llm_completion"]
    assert pieces == list(range(len(_pieces(answer))))
    report = asyncio.run(rerun_trace_async(tmp_path / "state", traces[0].stem))
    assert not report.drifted, [d.describe() for d in report.drifts]
    first, *rest = bodies
    assert "reply-close" not in first["grammar"]
    for n, body in enumerate(rest, start=1):
        assert body["grammar"].startswith("root ::= char{0,") and "reply-close ::=" in body["grammar"]
        # the prompt carries the answer so far, on the same slot (its cache is reused)
        assert body["prompt"].endswith(answer[:n * PIECE]) and body["id_slot"] == first["id_slot"]


def test_a_working_call_cut_by_the_limit_still_fails_as_a_model_error(tmp_path: Path):
    cut = json.dumps([{"tool": "os.fs.write", "args": {"path": "a.txt", "content": "y" * (3 * PIECE)}}])
    with FakeLlamaServer(script=[cut, cut]) as fake:
        result = _run(tmp_path, fake)
        bodies = fake.completion_bodies
    assert result.returncode != 0 and "model" in result.stderr
    assert all("reply-close" not in (b.get("grammar") or "") for b in bodies)  # never continued


def test_continuations_stop_after_the_cap(tmp_path: Path):
    endless = '[{"tool":"reply","args":{"text":"' + "z" * (PIECE * (MAX_CONTINUATIONS + 3))
    with FakeLlamaServer(script=_pieces(endless)) as fake:
        result = _run(tmp_path, fake)
        bodies = fake.completion_bodies
    assert result.returncode != 0 and "model" in result.stderr
    assert sum("reply-close" in (b.get("grammar") or "") for b in bodies) == MAX_CONTINUATIONS


@pytest.mark.parametrize(("content", "found"), [
    ('[{"tool":"reply","args":{"text":"Hello wor', ('[{"tool":"reply","args":{"text":"Hello wor', "Hello wor")),
    ('[ {"tool": "reply", "args": {"text": "a \\"b\\" c', ('[ {"tool": "reply", "args": {"text": "a \\"b\\" c',
                                                         'a \\"b\\" c')),
    ('[{"tool":"reply","args":{"text":"cut \\u00', ('[{"tool":"reply","args":{"text":"cut ', "cut ")),  # half escape
    ('[{"tool":"reply","args":{"text":"cut \\', ('[{"tool":"reply","args":{"text":"cut ', "cut ")),
    ('[{"tool":"reply","args":{"text":"done"}', None),  # the string was closed: the cut is elsewhere
    ('[{"tool":"os.fs.read","args":{"path":"a', None),
    ('<think>long thoughts', None),
])
def test_open_reply_text(content: str, found: tuple[str, str] | None):
    assert open_reply_text(content) == found


def test_the_continuation_grammar_keeps_the_reply_strings_bound():
    grammar = tool_call_grammar_source()
    assert continuation_grammar(grammar, "ab\\ncd").startswith("root ::= char{0,5995} reply-close\n")
    assert continuation_grammar(grammar, "x" * 6000) is None  # the bound is used up: nothing to continue
    assert continuation_grammar("root ::= anything", "x") is None


@pytest.mark.llama_server
async def test_the_real_server_accepts_the_continuation_grammar_and_closes_the_call(llama_server):
    from atomic_agent.api import CompletionRequest
    from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient

    grammar = continuation_grammar(tool_call_grammar_source(), "The answer is")
    prompt = ("<|im_start|>user\nSay something long.<|im_end|>\n<|im_start|>assistant\n"
              '[{"tool":"reply","args":{"text":"The answer is')
    client = LlamaServerClient(llama_server.base_url)
    try:
        done = await client.complete(CompletionRequest(prompt=prompt, grammar=grammar, n_predict=256, temperature=0.0,
                                                       seed=1))
    finally:
        await client.aclose()
    whole = '[{"tool":"reply","args":{"text":"The answer is' + done.content
    if done.stop_type == "limit":  # still inside the string, as the grammar allows: continuable again
        assert open_reply_text(whole) is not None
    else:  # closed exactly as tool-call.gbnf closes a reply
        assert json.loads(whole)[0]["args"]["text"].startswith("The answer is")


async def test_a_continuation_never_asks_for_more_than_the_window_by_the_servers_count():
    """The demo's overflow: each piece's prompt grows by what the model wrote, the estimate read
    it low, and the fourth request asked for 4,096 tokens of a 4,096 window (HTTP 400). The
    server's own counts of the last piece decide, so the request that would overflow is never sent."""
    from atomic_agent.agent.reply_continuation import continue_cut_reply
    from atomic_agent.llm.provider_protocol import Completion, CompletionRequest
    from atomic_agent.prompt.build_prompt import BuiltPrompt

    request = CompletionRequest(prompt="P", grammar='string ::= "\\"" char{0,20000} "\\""\n', n_predict=512)
    prompt = BuiltPrompt(stable_prefix="P", tail="", text="P", framed_prefix="P", sections=(), dropped_turns=0)
    opening = Completion(content='[{"tool":"reply","args":{"text":"' + "a" * 100, stop_type="limit",
                         tokens_evaluated=2781, tokens_predicted=512)
    asked: list[CompletionRequest] = []

    async def complete(req: CompletionRequest, sink: object) -> Completion:
        asked.append(req)
        return Completion(content="b" * 100, stop_type="limit", tokens_evaluated=2781 + 512 * len(asked),
                          tokens_predicted=512)

    done = await continue_cut_reply(complete, request, prompt, opening, None, 4096, lambda text: 10)
    assert len(asked) == 1  # 2781 + 512 + 512 fits; 3293 + 512 + 512 does not
    # what the model wrote reaches the user, marked where the window cut it, instead of a failed turn
    text = json.loads(done.content)[0]["args"]["text"]
    assert text == "a" * 100 + "b" * 100 + WINDOW_CUT_NOTE and done.stop_type == "eos"


async def test_a_piece_the_server_cut_at_the_windows_edge_is_closed_not_continued():
    from atomic_agent.agent.reply_continuation import continue_cut_reply
    from atomic_agent.llm.provider_protocol import Completion, CompletionRequest
    from atomic_agent.prompt.build_prompt import BuiltPrompt

    request = CompletionRequest(prompt="P", grammar='string ::= "\\"" char{0,20000} "\\""\n', n_predict=512)
    prompt = BuiltPrompt(stable_prefix="P", tail="", text="P", framed_prefix="P", sections=(), dropped_turns=0)
    opening = Completion(content='[{"tool":"reply","args":{"text":"' + "a" * 100, stop_type="limit",
                         truncated=True)
    asked: list[CompletionRequest] = []

    async def complete(req: CompletionRequest, sink: object) -> Completion:
        asked.append(req)
        return Completion(content="b", stop_type="eos")

    done = await continue_cut_reply(complete, request, prompt, opening, None, 4096, lambda text: 10)
    assert asked == []
    assert json.loads(done.content)[0]["args"]["text"] == "a" * 100 + WINDOW_CUT_NOTE
