"""`os.shell.run` args: arrays pass, JSON-stringified arrays are coerced, anything else errors."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.os.shell.shell_args import ShellArgsError, parse_shell_call
from atomic_agent.plugins.os.shell.shell_interpretation import needs_shell, plan_exec


def test_an_array_of_strings_is_taken_as_is() -> None:
    call = parse_shell_call({"cmd": "ls", "args": ["-la", "src"]})
    assert call.args == ("-la", "src") and not call.args_coerced


def test_a_json_stringified_array_is_coerced_back() -> None:
    call = parse_shell_call({"cmd": "ls", "args": '["-la", "src"]'})
    assert call.args == ("-la", "src") and call.args_coerced


def test_numbers_in_the_array_become_strings() -> None:
    assert parse_shell_call({"cmd": "head", "args": ["-n", 5]}).args == ("-n", "5")


@pytest.mark.parametrize("bad", [{"a": 1}, "-la src", 7, True, '{"x": 1}', [["nested"]], [None]])
def test_anything_else_is_a_structured_error_never_dropped(bad: object) -> None:
    with pytest.raises(ShellArgsError, match="args"):
        parse_shell_call({"cmd": "ls", "args": bad})


def test_missing_cmd_is_an_error_naming_the_fix() -> None:
    with pytest.raises(ShellArgsError, match="cmd must be a non-empty string"):
        parse_shell_call({"args": []})


@pytest.mark.parametrize("bad", [0, -1, "5", True])
def test_timeout_must_be_a_positive_number(bad: object) -> None:
    with pytest.raises(ShellArgsError, match="timeout_s"):
        parse_shell_call({"cmd": "ls", "timeout_s": bad})


@pytest.mark.parametrize("cmd,args", [("ls | wc -l", ()), ("echo $HOME", ()), ("ls -la", ()), ("a;b", ()),
                                      ("ls", ("-la", "|", "wc")), ("echo", ("x", ">", "f")), ("cat`x`", ())])
def test_shell_interpretation_is_used_only_when_needed(cmd: str, args: tuple[str, ...]) -> None:
    assert needs_shell(cmd, args)


@pytest.mark.parametrize("cmd,args", [("ls", ("-la",)), ("grep", ("a|b", "file")), ("echo", ("$HOME",)),
                                      ("git", ("commit", "-m", "fix; then > more"))])
def test_direct_exec_is_the_default_and_args_stay_literal(cmd: str, args: tuple[str, ...]) -> None:
    assert not needs_shell(cmd, args)


def test_a_whole_command_line_in_cmd_runs_under_sh_c() -> None:
    plan = plan_exec("ls -la /tmp", ())
    assert plan.via_shell and plan.argv == ("/bin/sh", "-c", "ls -la /tmp")


def test_args_routed_through_the_shell_keep_their_word_boundaries() -> None:
    plan = plan_exec("grep", ("hello world", "notes.txt", "|", "wc", "-l"))
    assert plan.argv[2] == "grep 'hello world' notes.txt | wc -l"
