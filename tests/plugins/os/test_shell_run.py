"""`os.shell.run` end to end on real subprocesses: exec modes, caps, timeout, cancel, env."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext
from atomic_agent.plugins.os.shell.exec_config import ExecConfig
from atomic_agent.plugins.os.shell.shell_tool import run_shell, shell_tool_spec
from tests.process_liveness import gone_soon


class Asked:
    """A context whose approvals are recorded and answered `answer`."""

    def __init__(self, working_dir: Path, answer: bool = True) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer = answer

        async def request_approval(category: str, summary: str, **extra: Any) -> bool:
            self.calls.append({"category": category, "summary": summary, **extra})
            return self.answer

        self.ctx = ToolContext(session_id="s1", working_dir=working_dir, state_dir=working_dir,
                               cancelled=asyncio.Event(), request_approval=request_approval)


async def run(args: dict[str, Any], tmp_path: Path, config: ExecConfig | None = None, answer: bool = True):  # noqa: ANN201
    asked = Asked(tmp_path, answer)
    return await run_shell(args, asked.ctx, config or ExecConfig()), asked


async def test_direct_exec_runs_the_program_with_literal_args(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "printf", "args": ["%s|%s", "a;b", "$HOME"]}, tmp_path)
    assert result.status == "ok"
    assert result.details["stdout"] == "a;b|$HOME"
    assert result.details["mode"] == "direct"


async def test_a_pipeline_runs_under_sh_c(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "printf 'b\\na\\n' | sort"}, tmp_path)
    assert result.details["stdout"] == "a\nb\n"
    assert result.details["mode"] == "sh -c"


async def test_a_whole_command_line_in_cmd_does_not_fail_with_enoent(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    result, _ = await run({"cmd": "ls -1", "args": []}, tmp_path)
    assert result.status == "ok" and "f.txt" in result.details["stdout"]


async def test_a_json_stringified_args_array_runs_as_the_array(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "echo", "args": '["one", "two"]'}, tmp_path)
    assert result.details["stdout"] == "one two\n"
    assert result.details["argsCoerced"] is True


async def test_an_object_args_value_is_an_error_and_nothing_runs(tmp_path: Path) -> None:
    result, asked = await run({"cmd": "touch", "args": {"path": "x"}}, tmp_path)
    assert result.status == "error" and "args must be an array" in result.summary
    assert asked.calls == [] and not (tmp_path / "x").exists()


async def test_every_command_asks_under_the_shell_category(tmp_path: Path) -> None:
    _, asked = await run({"cmd": "git", "args": ["--version"]}, tmp_path)
    assert asked.calls[0]["category"] == "shell"
    assert asked.calls[0]["command_shape"] == "git"
    assert asked.calls[0]["binding"].argv == ("git", "--version")


async def test_the_approval_summary_names_a_dangerous_rule(tmp_path: Path) -> None:
    _, asked = await run({"cmd": "git push --force origin main"}, tmp_path, answer=False)
    assert "dangerous.git_force_push" in asked.calls[0]["summary"]
    assert "command_shape" not in asked.calls[0]


async def test_a_denied_command_does_not_run(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "touch", "args": ["made"]}, tmp_path, answer=False)
    assert result.status == "error" and result.details["denied"]
    assert not (tmp_path / "made").exists()


async def test_nonzero_exit_is_an_error_with_the_code(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "sh -c 'echo oops >&2; exit 3'"}, tmp_path)
    assert result.status == "error" and result.details["exitCode"] == 3
    assert "exit 3" in result.summary and "oops" in result.summary


async def test_unknown_program_is_a_clear_error(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "definitely-not-a-program-xyz"}, tmp_path)
    assert result.status == "error" and "command not found" in result.summary


async def test_cwd_is_relative_to_the_session_dir_and_must_exist(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    result, _ = await run({"cmd": "pwd", "cwd": "sub"}, tmp_path)
    assert result.details["stdout"].strip() == str(tmp_path / "sub")
    missing, _ = await run({"cmd": "pwd", "cwd": "nope"}, tmp_path)
    assert missing.status == "error" and "not a directory" in missing.summary


async def test_stdin_is_fed_to_the_program(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "tr", "args": ["a-z", "A-Z"], "stdin": "hello"}, tmp_path)
    assert result.details["stdout"] == "HELLO"


async def test_a_program_that_ignores_stdin_is_not_an_error(tmp_path: Path) -> None:
    result, _ = await run({"cmd": "true", "stdin": "x" * 2_000_000}, tmp_path)
    assert result.status == "ok"


async def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    result, _ = await run({"cmd": f"sleep 300 & echo $! > {pidfile}; wait", "timeout_s": 0.5}, tmp_path)
    assert result.status == "error" and result.details["timedOut"]
    assert gone_soon(int(pidfile.read_text()))


async def test_cancellation_kills_the_process_group(tmp_path: Path) -> None:
    asked = Asked(tmp_path)
    pidfile = tmp_path / "child.pid"
    task = asyncio.ensure_future(run_shell({"cmd": f"sleep 300 & echo $! > {pidfile}; wait"}, asked.ctx, ExecConfig()))
    while not pidfile.exists() or not pidfile.read_text().strip():
        await asyncio.sleep(0.02)
    asked.ctx.cancelled.set()
    result = await task
    assert result.status == "cancelled"
    assert gone_soon(int(pidfile.read_text()))


async def test_output_keeps_head_and_tail_and_reports_sizes(tmp_path: Path) -> None:
    config = ExecConfig(output_head_bytes=1024, output_tail_bytes=1024)
    script = "import sys; sys.stdout.write('START' + 'x' * 100000 + 'END')"
    result, _ = await run({"cmd": sys.executable, "args": ["-c", script]}, tmp_path, config)
    details = result.details
    assert details["stdoutBytes"] == 100008 and details["stdoutTruncated"]
    assert details["stdout"].startswith("START") and details["stdout"].endswith("END")
    assert "bytes omitted" in details["stdout"]


async def test_children_get_the_filtered_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_TEST_API_KEY", "sk-secret-value")
    result, _ = await run({"cmd": "env"}, tmp_path)
    assert "sk-secret-value" not in result.details["stdout"]
    assert "PATH=" in result.details["stdout"]


async def test_declared_variables_reach_children(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_TEST_API_KEY", "sk-wanted")
    result, _ = await run({"cmd": "env"}, tmp_path, ExecConfig(allowed_environment=("ATOMIC_TEST_*",)))
    assert "ATOMIC_TEST_API_KEY=sk-wanted" in result.details["stdout"]


async def test_the_filter_can_be_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_TEST_API_KEY", "sk-all")
    result, _ = await run({"cmd": "env"}, tmp_path, ExecConfig(filter_environment=False))
    assert "sk-all" in result.details["stdout"]


def test_spec_is_gated_frequent_and_asks_under_shell() -> None:
    class Bare:
        config = None

    spec = shell_tool_spec(Bare())
    assert spec.name == "os.shell.run" and spec.resource_class.value == "approval_gated"
    assert spec.tier.value == "frequent" and spec.approval_category == "shell"
    assert spec.args_schema["properties"]["args"]["type"] == ["array", "string"]
