"""Hardline commands in every spelling the shell accepts: blocked before the gate, at every level.

Safety of the suite itself: every call here runs with an approval callback that says NO,
so a guard regression fails the test (the gate was reached) instead of running the command.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext
from atomic_agent.plugins.os.shell.exec_config import ExecConfig
from atomic_agent.plugins.os.shell.shell_tool import run_shell


async def blocked(args: dict[str, Any], tmp_path: Path) -> None:
    asked: list[str] = []

    async def never(category: str, summary: str, **extra: Any) -> bool:
        asked.append(summary)
        return False

    ctx = ToolContext("sec", tmp_path, tmp_path, asyncio.Event(), never)
    result = await run_shell(args, ctx, ExecConfig())
    assert asked == [], f"reached the approval gate: {asked}"
    assert result.status == "error" and "hardline" in result.summary
    assert result.details["guard"]["verdict"] == "hardline"


@pytest.fixture()
def cwd(tmp_path: Path) -> Path:
    return tmp_path


async def test_rm_rf_root(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["-rf", "/"]}, cwd)


async def test_rm_rf_double_slash(cwd: Path) -> None:
    await blocked({"cmd": "rm -rf //"}, cwd)


async def test_rm_rf_dot_slash_root(cwd: Path) -> None:
    await blocked({"cmd": "rm -rf /./"}, cwd)


async def test_rm_rf_root_glob(cwd: Path) -> None:
    await blocked({"cmd": "rm -rf /*"}, cwd)


async def test_rm_fr_reordered_flags(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["-f", "-r", "/"]}, cwd)


async def test_rm_long_flags(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["--recursive", "--force", "/"]}, cwd)


async def test_rm_no_preserve_root(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["-rf", "--no-preserve-root", "/"]}, cwd)


async def test_sudo_rm_rf_root(cwd: Path) -> None:
    await blocked({"cmd": "sudo", "args": ["rm", "-rf", "/"]}, cwd)


async def test_rm_through_sh_c(cwd: Path) -> None:
    await blocked({"cmd": "sh", "args": ["-c", "rm -rf /"]}, cwd)


async def test_rm_through_bash_c_in_a_command_line(cwd: Path) -> None:
    await blocked({"cmd": "bash -c 'rm -rf /'"}, cwd)


async def test_rm_through_nested_interpreters(cwd: Path) -> None:
    await blocked({"cmd": "bash", "args": ["-c", "sh -c \"zsh -c 'rm -rf /'\""]}, cwd)


async def test_rm_through_eval(cwd: Path) -> None:
    await blocked({"cmd": "eval 'rm -rf /'"}, cwd)


async def test_rm_through_su_c(cwd: Path) -> None:
    await blocked({"cmd": "su", "args": ["root", "-c", "rm -rf /"]}, cwd)


async def test_rm_in_a_command_substitution(cwd: Path) -> None:
    await blocked({"cmd": "echo $(rm -rf /)"}, cwd)


async def test_rm_in_backticks(cwd: Path) -> None:
    await blocked({"cmd": "echo `rm -rf /`"}, cwd)


async def test_rm_after_an_allowed_prefix(cwd: Path) -> None:
    await blocked({"cmd": "git status && rm -rf /"}, cwd)


async def test_rm_after_an_embedded_newline(cwd: Path) -> None:
    await blocked({"cmd": "echo ok\nrm -rf /"}, cwd)


async def test_rm_after_a_carriage_return_that_repaints_the_prompt(cwd: Path) -> None:
    await blocked({"cmd": "rm -rf / \recho harmless"}, cwd)


async def test_rm_split_by_backslash_newline(cwd: Path) -> None:
    await blocked({"cmd": "rm \\\n-rf /"}, cwd)


async def test_rm_spelled_in_fullwidth_letters(cwd: Path) -> None:
    await blocked({"cmd": "ｒｍ -rf /"}, cwd)


async def test_rm_with_a_zero_width_space(cwd: Path) -> None:
    await blocked({"cmd": "r\u200bm -rf /"}, cwd)


async def test_rm_with_ifs_obfuscation(cwd: Path) -> None:
    await blocked({"cmd": "rm${IFS}-rf${IFS}/"}, cwd)


async def test_rm_with_ansi_c_quoting(cwd: Path) -> None:
    await blocked({"cmd": "$'\\x72\\x6d' -rf /"}, cwd)


async def test_rm_with_split_quotes(cwd: Path) -> None:
    await blocked({"cmd": "\"r\"'m' -rf '/'"}, cwd)


async def test_rm_alias_bypass_backslash(cwd: Path) -> None:
    await blocked({"cmd": "\\rm -rf /"}, cwd)


async def test_rm_by_absolute_path_in_upper_case(cwd: Path) -> None:
    await blocked({"cmd": "/bin/RM", "args": ["-rf", "/"]}, cwd)


async def test_rm_behind_env_assignment_prefix(cwd: Path) -> None:
    await blocked({"cmd": "TZ=\"$HOME\" rm -rf /"}, cwd)


async def test_rm_behind_wrappers(cwd: Path) -> None:
    await blocked({"cmd": "nohup", "args": ["timeout", "5", "env", "-i", "nice", "-n", "5", "rm", "-rf", "/"]}, cwd)


async def test_rm_with_ansi_escape_hiding_it(cwd: Path) -> None:
    await blocked({"cmd": "echo hi; \x1b[2Krm -rf /"}, cwd)


async def test_rm_after_cd_to_root(cwd: Path) -> None:
    await blocked({"cmd": "cd / && rm -rf *"}, cwd)


async def test_rm_of_the_home_dir(cwd: Path) -> None:
    await blocked({"cmd": "rm -rf ~"}, cwd)


async def test_rm_of_quoted_home_variable(cwd: Path) -> None:
    await blocked({"cmd": 'rm -rf "$HOME"'}, cwd)


async def test_rm_of_a_system_dir(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["-rf", "/usr/"]}, cwd)


async def test_rm_of_a_symlink_to_root(cwd: Path) -> None:
    (cwd / "innocent").symlink_to("/")
    await blocked({"cmd": "rm", "args": ["-rf", "innocent/"]}, cwd)


async def test_rm_through_a_dot_dot_climb(cwd: Path) -> None:
    await blocked({"cmd": "rm", "args": ["-rf", "../" * 40]}, cwd)


async def test_find_root_delete(cwd: Path) -> None:
    await blocked({"cmd": "find", "args": ["/", "-delete"]}, cwd)


async def test_find_root_exec_rm(cwd: Path) -> None:
    await blocked({"cmd": "find / -exec rm -rf {} +"}, cwd)


async def test_fork_bomb(cwd: Path) -> None:
    await blocked({"cmd": ":(){ :|:& };:"}, cwd)


async def test_named_fork_bomb(cwd: Path) -> None:
    await blocked({"cmd": "boom() { boom | boom & }; boom"}, cwd)


async def test_mkfs(cwd: Path) -> None:
    await blocked({"cmd": "mkfs.ext4", "args": ["/dev/sda1"]}, cwd)


async def test_dd_onto_a_raw_disk(cwd: Path) -> None:
    await blocked({"cmd": "dd", "args": ["if=/dev/zero", "of=/dev/sda", "bs=1M"]}, cwd)


async def test_redirect_onto_an_nvme_disk(cwd: Path) -> None:
    await blocked({"cmd": "cat image.bin > /dev/nvme0n1"}, cwd)


async def test_tee_onto_a_raw_disk(cwd: Path) -> None:
    await blocked({"cmd": "echo x | tee /dev/sdb"}, cwd)


async def test_chmod_recursive_777_root(cwd: Path) -> None:
    await blocked({"cmd": "chmod", "args": ["-R", "777", "/"]}, cwd)


async def test_kill_every_process(cwd: Path) -> None:
    await blocked({"cmd": "kill", "args": ["-9", "-1"]}, cwd)


async def test_shutdown_in_command_position(cwd: Path) -> None:
    await blocked({"cmd": "sleep 1; shutdown -h now"}, cwd)


async def test_hardline_blocks_even_when_a_10kb_prefix_pushes_it_past_truncation(cwd: Path) -> None:
    await blocked({"cmd": "echo " + "a" * 10_000 + "; rm -rf /"}, cwd)
