"""A turn's trouble is read from its transcript rows: a failure or a tool error is `failed`,
a loop-guard veto, a retried call, running out of steps or many calls for a short answer is a
`detour`, a correcting next message makes it `corrected`; clean and cancelled turns are None."""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.memory.turn_trouble import assess_turn, corrects
from atomic_agent.sessions.transcript_entry import TranscriptEntry as E


def turn(*rows: Any, reason: str = "reply", index: int = 3) -> list[E]:
    return [E("turn_started", index), E("user", index, text="read config.yaml and tell me the port"), *rows,
            E("turn_finished", index, status="completed" if reason in ("reply", "finish") else "failed",
              reason=reason)]


def call(tool: str, step: int, **args: Any) -> E:
    return E("assistant_tool_call", 3, tool=tool, args=args, step=step, batch_index=0)


def result(tool: str, step: int, status: str = "ok", text: str = "ok", **details: Any) -> E:
    return E("tool_result", 3, tool=tool, status=status, text=text, step=step, batch_index=0, details=details)


def test_a_clean_turn_is_no_trouble_and_other_turns_are_not_read() -> None:
    rows = turn(call("fs.read", 0, path="config.yaml"), result("fs.read", 0, text="port: 8080"),
                E("assistant_reply", 3, text="The port is 8080.", tool="reply"))
    assert assess_turn(rows, "s", 3) is None
    assert assess_turn(rows, "s", 4) is None


def test_a_tool_error_makes_the_turn_failed_with_the_error_in_its_signals() -> None:
    rows = turn(call("fs.read", 0, path="config.yml"), result("fs.read", 0, "error", "no such file: config.yml"),
                call("fs.read", 1, path="config.yaml"), result("fs.read", 1, text="port: 8080"),
                E("assistant_reply", 3, text="The port is 8080.", tool="reply"))
    trouble = assess_turn(rows, "s", 3)
    assert trouble is not None and trouble.kind == "failed" and trouble.origin == "s#3"
    assert trouble.signals == ("fs.read returned an error: no such file: config.yml",)
    assert trouble.steps == ("fs.read(path) -> error: no such file: config.yml", "fs.read(path) -> ok: port: 8080")


def test_a_failed_turn_is_failed_and_says_its_category_and_note() -> None:
    rows = turn(E("failure_note", 3, text="The last turn failed: the model server stopped answering"),
                reason="transport")
    trouble = assess_turn(rows, "s", 3)
    assert trouble is not None and trouble.kind == "failed" and trouble.reply_text == ""
    assert trouble.signals[0].startswith("the turn failed (transport): The last turn failed: the model server")


def test_loop_vetoes_retries_out_of_steps_and_long_detours_are_detours() -> None:
    vetoed = turn(call("web.fetch", 0, url="u"), result("web.fetch", 0, text="404"),
                  call("web.fetch", 1, url="u"), result("web.fetch", 1, "error", "repeated", deniedReason="tool-loop"),
                  E("assistant_reply", 3, text="I stopped here.", tool="reply"))
    trouble = assess_turn(vetoed, "s", 3)
    assert trouble is not None and trouble.kind == "detour"
    assert trouble.signals == ("the loop guard stopped a repeated web.fetch call",
                               "it called web.fetch with the same arguments 2 times")
    out_of_steps = assess_turn(turn(reason="max_steps"), "s", 3)
    assert out_of_steps is not None and out_of_steps.signals == ("it ran out of steps before answering",)
    many = [x for i in range(6) for x in (call("fs.list", i, path=f"d{i}"), result("fs.list", i))]
    long_way = assess_turn(turn(*many, E("assistant_reply", 3, text="8080", tool="reply")), "s", 3)
    assert long_way is not None and long_way.signals == ("it took 6 tool calls for a short answer",)
    assert assess_turn(turn(*many, E("assistant_reply", 3, text="8080", tool="reply")), "s", 3,
                       detour_calls=7) is None


def test_a_correction_names_the_turn_corrected_first_and_cancelled_turns_say_nothing() -> None:
    rows = turn(call("fs.read", 0, path="a"), result("fs.read", 0, "error", "denied"),
                E("assistant_reply", 3, text="The port is 80.", tool="reply"))
    trouble = assess_turn(rows, "s", 3, correction="No, that's wrong: it is in config.yaml")
    assert trouble is not None and trouble.kind == "corrected" and trouble.correction.startswith("No, that's")
    assert trouble.signals[0].startswith("the user's next message corrected the reply")
    assert "fs.read returned an error: denied" in trouble.signals
    assert assess_turn(turn(reason="cancelled"), "s", 3) is None
    assert assess_turn(turn(reason="interrupted"), "s", 3) is None


def test_corrections_are_told_from_follow_ups() -> None:
    for text in ("No, I meant the staging server", "that's wrong", "It didn't work, still broken",
                 "No. The file is in /etc", "not what I asked", "You forgot the tests", "wrong file"):
        assert corrects(text), text
    for text in ("thanks, now deploy it", "what about the other port?", "Now do the same for prod", "",
                 "know any good books?", "nothing else", "No problem, thanks!",
                 "no worries, next: the logs", "Actually, also add a test"):
        assert not corrects(text), text
