"""Older tool results fold to one line each; the latest batch stays whole (within the batch
cap); a folded line is the same bytes on every later step; the fold is a template a user can
override; and the stable prefix names rare tools only (tool.view has the rest)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from atomic_agent.config.app_config import AgentConfig
from atomic_agent.llm.model_profile import PLAIN_CHATML_PROFILE
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix
from atomic_agent.prompt.describe_tool import first_clause
from atomic_agent.prompt.prompt_assets import make_prompt_env
from atomic_agent.prompt.reference_data import quote_continuation
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TOOL_CALL, TOOL_RESULT, TURN_STARTED, USER, TranscriptEntry
from tests.golden_files import assert_matches_golden
from tests.prompt.test_build_prompt import CAPS, GOLDEN, registry

LISTING = "./: 2 dirs, 3 files shown\nsrc/\ndocs/\na.txt  1K\nb.txt  2K\nc.txt  3K"
README = "README.md · lines 1-4 of 4\n     1\t# demo\n     2\t\n     3\tline three\n     4\tline four"


def step(session: SessionState, turn: int, n: int, *results: tuple[str, dict[str, str], str]) -> None:
    for i, (tool, args, _) in enumerate(results):
        session.entries.append(TranscriptEntry(TOOL_CALL, turn, tool=tool, args=args, step=n, batch_index=i))
    for i, (tool, _, text) in enumerate(results):
        session.entries.append(TranscriptEntry(TOOL_RESULT, turn, text=text, tool=tool, status="ok", step=n,
                                               batch_index=i))


def session_after_three_steps() -> SessionState:
    session = SessionState(id="s", working_dir=Path("/work/demo"), created_at="")
    session.entries += [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="look around")]
    step(session, 0, 1, ("t.read", {"path": "."}, LISTING))
    step(session, 0, 2, ("t.read", {"path": "README.md"}, README), ("t.read", {"path": "b.txt"}, "b.txt · 1 line\nbee"))
    return session


def tail_of(session: SessionState, env=None, agent: AgentConfig | None = None) -> str:
    return build_prompt(env=env or make_prompt_env(), stable_prefix="P", profile=PLAIN_CHATML_PROFILE,
                        registry=registry(), session=session, agent=agent or AgentConfig(), today=date(2026, 12, 2)).tail


def conversation_of(tail: str) -> list[str]:
    return tail.split("### conversation\n", 1)[1].split("\ncurrent date:", 1)[0].splitlines()


def test_latest_batch_is_shown_whole_and_older_results_fold_to_one_line() -> None:
    lines = conversation_of(tail_of(session_after_three_steps()))
    assert "tool_result[t.read ok]: ./: 2 dirs, 3 files shown [+5 lines folded]" in lines
    assert "src/" not in lines  # the folded listing's body is not repeated
    whole = "\n".join(lines)
    # both results of the latest batch, in full; their later lines quoted as data (reference_data)
    assert f"tool_result[t.read ok]: {quote_continuation(README)}" in whole
    assert "tool_result[t.read ok]: b.txt · 1 line\n> bee" in whole


def test_a_folded_line_is_the_same_bytes_on_every_later_step() -> None:
    session = session_after_three_steps()
    before = tail_of(session)
    step(session, 0, 3, ("t.read", {"path": "c.txt"}, "c.txt · 1 line\nsea"))
    after = tail_of(session)
    folded_listing = "tool_result[t.read ok]: ./: 2 dirs, 3 files shown [+5 lines folded]\n"
    assert folded_listing in before and folded_listing in after
    # what was the latest batch is folded now, and the lines before it are unchanged bytes
    assert "tool_result[t.read ok]: README.md · lines 1-4 of 4 [+4 lines folded]" in after
    head = before.split("assistant_tool_call: t.read {\"path\":\"README.md\"}")[0]
    assert after.startswith(head)


def test_the_latest_batch_keeps_its_batch_cap() -> None:
    session = session_after_three_steps()
    step(session, 0, 3, ("t.read", {"path": "x"}, "x" * 900), ("t.read", {"path": "y"}, "y" * 900))
    tail = tail_of(session, agent=AgentConfig(batch_tool_result_char_cap=1000))
    assert "…[trimmed: batch result cap]" in tail and "y" * 900 in tail  # the oldest of the batch gives way


def test_a_users_template_overrides_the_fold(tmp_path: Path) -> None:
    (tmp_path / "older_tool_result.j2").write_text("(older {{ tool }} result)")
    lines = conversation_of(tail_of(session_after_three_steps(), env=make_prompt_env([tmp_path])))
    assert "tool_result[t.read ok]: (older t.read result)" in lines


def test_tail_with_tool_results_is_pinned_by_a_golden_file() -> None:
    assert_matches_golden(GOLDEN / "tail_coached_with_tool_results.txt", tail_of(session_after_three_steps()))


def test_stable_prefix_shows_rare_tools_by_name_and_frequent_summaries_to_their_first_clause() -> None:
    prefix = build_stable_prefix(make_prompt_env(), registry(), CAPS)
    extras = prefix.split("# extras (tier rare; tool.view first)\n", 1)[1].split("###", 1)[0]
    assert extras.splitlines() == [s.name for s in registry().rare()]
    assert "— A gated thing [asks approval]\n" in prefix


def test_first_clause_cuts_at_the_first_parenthesis_semicolon_colon_or_sentence_end() -> None:
    assert first_clause("Search file contents by regex; prints path:line:text (ripgrep when installed).") == \
        "Search file contents by regex"
    assert first_clause("List a directory compactly (dirs first, sizes).") == "List a directory compactly"
    assert first_clause("Changed files and the patch: unstaged by default.") == "Changed files and the patch"
    assert first_clause("Run it. Output is capped.") == "Run it"
    assert first_clause("Load a rare tool's full schema before calling it.") == \
        "Load a rare tool's full schema before calling it"
    assert first_clause("(odd) leading parenthesis") == "(odd) leading parenthesis"
