"""The prompt's teaching parts: the `### instructions` examples show tool use (a small model
copies the first example it sees) and name only tools that are registered; the `### respond`
section restates the request and, once a tool result is in, offers it as a reply that is valid
JSON; whatever the tail restates still fits the context."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from atomic_agent.config.app_config import AgentConfig
from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.llm.model_profile import PLAIN_CHATML_PROFILE
from atomic_agent.prompt.build_prompt import build_prompt, estimate_tokens
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix
from atomic_agent.prompt.prompt_assets import make_prompt_env
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TOOL_CALL, TOOL_RESULT, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.tools.builtin_tools import builtin_tool_specs
from atomic_agent.tools.tool_registry import ToolRegistry

CAPS = [("platform", "linux"), ("working_dir", "/work/demo")]
PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}}


async def _noop(args, ctx) -> ToolResult:
    return ToolResult.ok("")


def registry_with(*names: str) -> ToolRegistry:
    specs = [ToolSpec(n, f"{n} does a thing.", PATH_SCHEMA, ResourceClass.PURE_READ, _noop) for n in names]
    return ToolRegistry([*builtin_tool_specs(), *specs])


def instructions(registry: ToolRegistry) -> str:
    prefix = build_stable_prefix(make_prompt_env(), registry, CAPS, max_calls=8)
    return prefix[prefix.index("### instructions"):]


def test_no_example_is_a_bare_reply_before_any_tool_call() -> None:
    text = instructions(registry_with("os.fs.list", "os.fs.read", "os.fs.grep", "os.git.status", "os.git.log"))
    calls = [line for line in text.splitlines() if line.startswith("[{")]
    assert calls and '"tool": "reply"' not in calls[0]
    assert "Hello!" not in text


def test_the_example_turn_and_picks_name_every_registered_everyday_tool() -> None:
    text = instructions(registry_with("os.fs.list", "os.fs.read", "os.fs.grep", "os.git.status", "os.git.log"))
    assert 'user: what is in this folder?\n[{"tool": "os.fs.list", "args": {"path": "."}}]' in text
    picks = next(line for line in text.splitlines() if line.startswith("For step 1 pick the tool"))
    for name in ("os.fs.list", "os.fs.read", "os.fs.grep", "os.git.status", "os.git.log"):
        assert name in picks


def test_the_example_reply_repeats_its_tool_result_word_for_word() -> None:
    # a placeholder reply ("<the answer ...>") taught the starter model to answer "No response"
    text = instructions(registry_with("os.fs.list"))
    lines = text.splitlines()
    result = next(line for line in lines if line.startswith("tool_result[os.fs.list ok]: "))
    reply = json.loads(lines[lines.index(result) + 1])
    assert reply == [{"tool": "reply", "args": {"text": result.split("]: ", 1)[1]}}]


def test_examples_name_only_tools_that_are_registered() -> None:
    only_read = instructions(registry_with("os.fs.read"))
    assert "os.fs.list" not in only_read and "os.git" not in only_read and "os.fs.grep" not in only_read
    assert "what a file says: os.fs.read with its path" in only_read
    assert "For step 1 pick" not in instructions(registry_with())


def session_with(*entries: TranscriptEntry) -> SessionState:
    state = SessionState(id="s", working_dir=Path("/work/demo"), created_at="")
    state.entries += [TranscriptEntry(TURN_STARTED, 0), *entries]
    return state


def respond(session: SessionState, n_ctx: int | None = None, tools: tuple[str, ...] = ("os.fs.list",)) -> str:
    built = build_prompt(env=make_prompt_env(), stable_prefix="P", profile=PLAIN_CHATML_PROFILE,
                         registry=registry_with(*tools), session=session, agent=AgentConfig(),
                         n_ctx=n_ctx, today=date(2026, 1, 2))
    return built.tail[built.tail.index("### respond"):]


def test_before_any_tool_result_the_request_is_restated_and_step_1_asked_for() -> None:
    text = respond(session_with(TranscriptEntry(USER, 0, text="what is in here?")), tools=())
    assert text.splitlines()[1:] == ["The user asked: what is in here?",
                                     "Respond now with step 1: call the tool that finds the answer."]


def test_the_restated_request_is_the_latest_user_message_cut_at_300_characters() -> None:
    from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED

    later = "y" * 400
    text = respond(session_with(TranscriptEntry(USER, 0, text="first question"), TranscriptEntry(REPLY, 0, text="ok"),
                                TranscriptEntry(TURN_FINISHED, 0), TranscriptEntry(TURN_STARTED, 1),
                                TranscriptEntry(USER, 1, text=later)), tools=())
    assert text.splitlines()[1] == "The user asked: " + "y" * 299 + "…"


EVERYDAY = ("os.fs.list", "os.fs.read", "os.fs.grep", "os.git.log", "os.git.status")


def test_step_1_points_at_the_tool_the_requests_words_suggest() -> None:
    def suggested(request: str, tools: tuple[str, ...] = EVERYDAY) -> object:
        text = respond(session_with(TranscriptEntry(USER, 0, text=request)), tools=tools)
        calls = [line for line in text.splitlines() if line.startswith("[{")]
        return json.loads(calls[0]) if calls else None

    assert suggested("What is the owner in notes.md?") == [{"tool": "os.fs.read", "args": {"path": "notes.md"}}]
    assert suggested("Which file mentions the word kiwi?") == [{"tool": "os.fs.grep", "args": {"pattern": "kiwi"}}]
    assert suggested("Who wrote the last commit?") == [{"tool": "os.git.log", "args": {"limit": 1}}]
    assert suggested("Which branch am I on?") == [{"tool": "os.git.status", "args": {}}]
    assert suggested("what files are in here?") == [{"tool": "os.fs.list", "args": {"path": "."}}]
    assert suggested("Say hello.") is None  # nothing in the request points at a tool
    assert suggested('Use os.fs.read with {"path": "a.md"}') is None  # the user named the tool: no competing hint
    assert suggested('read the file "we\"ird.txt"')[0]["args"]["path"] == 'we"ird.txt'  # valid JSON, escaped


def test_step_1_never_points_at_an_unregistered_tool() -> None:
    text = respond(session_with(TranscriptEntry(USER, 0, text="Who wrote the last commit in notes.md file?")),
                   tools=("os.fs.list",))
    offered = next(line for line in text.splitlines() if line.startswith("[{"))
    assert json.loads(offered) == [{"tool": "os.fs.list", "args": {"path": "."}}]


def test_after_an_ok_result_the_offered_reply_is_valid_json_carrying_the_result() -> None:
    result = 'a.txt  3B\nb "quoted".md\t1K\\x'
    text = respond(session_with(
        TranscriptEntry(USER, 0, text="list"),
        TranscriptEntry(TOOL_CALL, 0, tool="os.fs.list", args={"path": "."}, step=1, batch_index=0),
        TranscriptEntry(TOOL_RESULT, 0, text=result, tool="os.fs.list", status="ok", step=1, batch_index=0)))
    offered = next(line for line in text.splitlines() if line.startswith("[{"))
    assert json.loads(offered) == [{"tool": "reply", "args": {"text": 'a.txt  3B / b "quoted".md 1K\\x'}}]
    # the way out comes first and the offered reply is the section's last line, nearest the answer
    assert "does not answer the user's request, call the next tool" in text
    assert text.rstrip("\n").endswith(offered)


def test_after_a_failed_call_the_model_is_told_to_change_course() -> None:
    text = respond(session_with(
        TranscriptEntry(USER, 0, text="read x"),
        TranscriptEntry(TOOL_CALL, 0, tool="os.fs.list", args={"path": "x"}, step=1, batch_index=0),
        TranscriptEntry(TOOL_RESULT, 0, text="no such directory: x", tool="os.fs.list", status="error", step=1,
                        batch_index=0)))
    assert "the last call failed" in text and '"tool": "reply"' not in text


def test_a_huge_result_restated_in_the_tail_still_fits_the_context() -> None:
    big = "line of output\n" * 3000
    session = session_with(
        TranscriptEntry(USER, 0, text="cat it"),
        TranscriptEntry(TOOL_CALL, 0, tool="os.fs.list", args={"path": "."}, step=1, batch_index=0),
        TranscriptEntry(TOOL_RESULT, 0, text=big, tool="os.fs.list", status="ok", step=1, batch_index=0))
    built = build_prompt(env=make_prompt_env(), stable_prefix="P", profile=PLAIN_CHATML_PROFILE,
                         registry=registry_with("os.fs.list"), session=session, agent=AgentConfig(),
                         n_ctx=2048, n_predict=256)
    assert estimate_tokens(built.text) + 256 <= 2048
    assert "If the tool_result does not answer the user's request" in built.tail
