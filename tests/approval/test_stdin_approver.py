"""The terminal prompt: y/s/a/n, the category label, safe display, end of input denies."""

from __future__ import annotations

import io

from atomic_agent.api import stdin_approver
from atomic_agent.approval.approval_answers import AnswerKind, ApprovalRequest
from atomic_agent.approval.stdin_approver import render_prompt, safe_display


def _request(**kw) -> ApprovalRequest:
    base = dict(session_id="s", tool="os.shell.run", category="shell", label="shell command", summary="git status",
                command_shape="git", level=1, can_grant_category=True, can_grant_shape=True)
    return ApprovalRequest(**{**base, **kw})


async def _answer(text: str, request: ApprovalRequest | None = None) -> tuple[object, str]:
    out = io.StringIO()
    events: list = []
    ask = stdin_approver(events.append, stdin=io.StringIO(text), out=out)
    answer = await ask(request or _request())
    assert events and events[0]["category"] == "shell" and events[0]["label"] == "shell command"
    return answer, out.getvalue()


async def test_prompt_shows_the_category_label_and_all_offers() -> None:
    _, shown = await _answer("n\n")
    assert "approval needed · shell command" in shown and "git status" in shown
    assert "[y] allow this call once" in shown and "[s] allow every shell command this session" in shown
    assert "[a] allow all `git` this session" in shown and "[n] deny" in shown and "answer [y/s/a/N]" in shown


async def test_y_s_a_n_map_to_answers() -> None:
    for typed, kind in (("y\n", AnswerKind.ONCE), ("S\n", AnswerKind.SESSION), ("a\n", AnswerKind.SHAPE),
                        ("n\n", AnswerKind.DENY), ("\n", AnswerKind.DENY)):
        answer, _ = await _answer(typed)
        assert answer.kind is kind, typed


async def test_a_is_not_accepted_where_no_shape_is_offered() -> None:
    answer, shown = await _answer("a\na\na\n", _request(command_shape=None, can_grant_shape=False))
    assert answer.kind is AnswerKind.DENY and "[a]" not in shown and shown.count("answer [") == 3


async def test_end_of_input_denies_at_once() -> None:
    answer, shown = await _answer("")
    assert answer.kind is AnswerKind.DENY and "no answer: denied" in shown


def test_escape_sequences_and_carriage_returns_cannot_hide_text() -> None:
    shown = render_prompt(_request(summary="rm -rf build\r\x1b[2Kls -l   \x1b]0;title\x07 \u202eevil"))
    assert "\x1b" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "rm -rf build" in shown and "ls -l" in shown


def test_long_summary_keeps_its_dangerous_tail_visible() -> None:
    summary = "echo " + "a" * 10_000 + " && curl x | sh"
    shown = safe_display(summary)
    assert shown.endswith("curl x | sh") and "chars not shown" in shown and len(shown) < 2200


def _question(**kw) -> ApprovalRequest:
    question = {"prompt": "Delete the 3 old backups?", "reason": "irreversible_commitment",
                "evidence": "they are the only copies", "allowFreeText": False,
                "options": [{"id": "yes", "label": "Delete them"}, {"id": "no", "label": "Keep them"}], **kw}
    return _request(tool="ask_user", category="question", label="question", summary=question["prompt"],
                    question=question, approval_id="apr_00112233aabbccdd")


async def _ask(text: str, request: ApprovalRequest) -> tuple[object, str, list]:
    out = io.StringIO()
    events: list = []
    answer = await stdin_approver(events.append, stdin=io.StringIO(text), out=out)(request)
    return answer, out.getvalue(), events


async def test_a_question_shows_its_options_and_takes_an_option_id_or_its_number() -> None:
    answer, shown, events = await _ask("no\n", _question())
    assert answer == {"option": "no"}
    assert "Delete the 3 old backups?" in shown and "[1] yes: Delete them" in shown and "[2] no: Keep them" in shown
    assert "why it asks: they are the only copies" in shown and "apr_00112233aabbccdd" in shown
    assert events[0]["kind"] == "question" and events[0]["approvalId"] == "apr_00112233aabbccdd"
    assert (await _ask("1\n", _question()))[0] == {"option": "yes"}
    assert (await _ask("YES\n", _question()))[0] == {"option": "yes"}


async def test_free_text_is_taken_only_where_the_question_allows_it() -> None:
    answer, shown, _ = await _ask("maybe later\nno\n", _question())
    assert answer == {"option": "no"} and "takes no free text" in shown
    answer, shown, _ = await _ask("keep the newest one\n", _question(allowFreeText=True))
    assert answer == {"text": "keep the newest one"} and "or type your own answer" in shown


async def test_end_of_input_or_three_wrong_answers_withdraw_the_question() -> None:
    answer, shown, _ = await _ask("", _question())
    assert answer == {"cancel": "no answer at the terminal (end of input)"} and "withdrawn" in shown
    answer, _, _ = await _ask("x\ny\nz\n", _question())
    assert answer == {"cancel": "no valid answer at the terminal in 3 tries"}

def test_the_terminal_and_the_tui_offer_the_same_answers_from_the_gates_one_table() -> None:
    from atomic_agent.approval.approval_answers import offered_answers
    from atomic_agent.approval.stdin_approver import choices, parse_answer
    from atomic_agent.plugins.tui.approval_modal import decision_for, offered

    for grants in ((True, True), (True, False), (False, False)):
        request = _request(can_grant_category=grants[0], can_grant_shape=grants[1])
        table = offered_answers(request)
        assert [(a.key, a.meaning) for a in table] == choices(request)
        assert [(a.key, a.meaning, a.word) for a in offered(request)] == [(a.key, a.meaning, a.word) for a in table]
        for answer in table:  # a key means the same decision on both surfaces
            typed = parse_answer(answer.key, request)
            assert typed is not None and typed.kind is answer.kind is decision_for(request, answer.key)
    never = _request(can_grant_category=False, can_grant_shape=False)
    assert parse_answer("s", never) is None and decision_for(never, "s") is AnswerKind.DENY
