"""Issue 29, class 2: what grants control of the runtime — the operator token in
`<state>/serve/`, the approval audit log, the owner leases, the `.env` — is secret for
every reader: read, grep, list, glob and the shell, at level 1 and at level 5, by path,
through a symlink and through a hard link. Writing there asks under `trust_config`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import TRUST_CATEGORY, classify_fs_mutation
from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_roots
from tests.plugins.os.fs_kit import FsWorld
from tests.plugins.os.shell_kit import TOKEN, shell, shell_world

LEASE = "owner-lease-4242"


@pytest.fixture(params=[1, 5], ids=["level1", "level5"])
def world(request: Any, tmp_path: Path, monkeypatch: Any) -> FsWorld:
    built = shell_world(tmp_path, monkeypatch, level=request.param)
    (built.state / "audit").mkdir(exist_ok=True)
    (built.state / "audit" / "approvals.ndjson").write_text(f'{{"answer": "{TOKEN}"}}\n')
    (built.state / "turn-owners").mkdir()
    (built.state / "turn-owners" / "123-abc.lock").write_text(LEASE)
    return built


def leaked(result: Any) -> bool:
    text = result.summary + repr(dict(result.details))
    return TOKEN in text or LEASE in text


READ_PATHS = ["{S}/serve/operator-token", "{S}/serve/../serve/operator-token", "{S}//serve/operator-token",
              "{S}/audit/approvals.ndjson", "{S}/turn-owners/123-abc.lock", "~/.atomic-agent/serve/operator-token"]


@pytest.mark.parametrize("path", READ_PATHS)
async def test_no_reading_tool_returns_a_runtime_control_secret(world: FsWorld, path: str):
    target = path.format(S=world.state)
    for tool, args in (("os.fs.read", {"path": target}), ("os.fs.hash", {"path": target})):
        result = await world.call(tool, args)
        assert result.status == "error" and not leaked(result), (tool, result.summary)


@pytest.mark.parametrize("how", ["symlink_file", "symlink_dir", "hard_link"])
async def test_a_link_planted_in_the_workspace_is_still_the_token(world: FsWorld, how: str):
    if how == "symlink_file":
        (world.ws / "t").symlink_to(world.state / "serve" / "operator-token")
        path = "t"
    elif how == "symlink_dir":
        (world.ws / "d").symlink_to(world.state / "serve")
        path = "d/operator-token"
    else:
        os.link(world.state / "serve" / "operator-token", world.ws / "t")
        path = "t"
    result = await world.call("os.fs.read", {"path": path})
    assert result.status == "error" and not leaked(result)
    grep = await world.call("os.fs.grep", {"pattern": "op-token", "path": "."})
    assert not leaked(grep)


@pytest.mark.parametrize("where", ["{S}", "{S}/serve", "{S}/serve/operator-token", "{S}/audit", "~"])
async def test_grep_never_returns_a_line_of_a_runtime_control_secret(world: FsWorld, where: str):
    result = await world.call("os.fs.grep", {"pattern": "op-token|owner-lease", "path": where.format(S=world.state),
                                             "hidden": True})
    assert not leaked(result), result.summary


@pytest.mark.parametrize("where", ["{S}/serve", "{S}/audit", "{S}/turn-owners", "{S}/serve/."])
async def test_list_refuses_a_folder_of_runtime_secrets(world: FsWorld, where: str):
    result = await world.call("os.fs.list", {"path": where.format(S=world.state), "hidden": True})
    assert result.status == "error" and "operator-token" not in result.summary and not leaked(result)


async def test_listing_the_state_dir_does_not_descend_into_the_secrets(world: FsWorld):
    result = await world.call("os.fs.list", {"path": str(world.state), "depth": 3, "hidden": True})
    assert result.status == "ok" and "withheld" in result.summary
    assert "operator-token" not in result.summary and LEASE not in result.summary


@pytest.mark.parametrize("pattern", ["**/*", "**/operator-*", "serve/*", "**/*.lock", "audit/**"])
async def test_glob_never_names_a_file_inside_the_secrets(world: FsWorld, pattern: str):
    result = await world.call("os.fs.glob", {"pattern": pattern, "path": str(world.state), "hidden": True})
    assert "operator-token" not in result.summary and LEASE not in result.summary


SHELL_LINES = ["cat {S}/serve/operator-token", "cat {S}/serve/*", "cat {S}/s*/o*", "ls {S}/serve",
               "cd {S}/serve && cat *", "cd {S} && cat serve/operator-token", "grep -r . {S}/serve",
               "find {S}/serve -type f -exec cat {{}} +", "tail {S}/audit/approvals.ndjson",
               "cat {S}/turn-owners/*.lock", "sh -c 'cat {S}/serve/operator-token'",
               "python3 -c \"print(open('{S}/serve/operator-token').read())\"", "cp -r {S}/serve /tmp/x"]


@pytest.mark.parametrize("line", SHELL_LINES)
async def test_the_shell_never_reads_a_runtime_control_secret_silently(world: FsWorld, line: str):
    outcome = await shell(world, line.format(S=world.state))
    assert outcome.blocked or (outcome.asked == ("shell_undecidable",) and not outcome.ran), outcome
    assert TOKEN not in outcome.text and LEASE not in outcome.text


@pytest.mark.parametrize("name", ["serve/operator-token", "serve/new", "audit/approvals.ndjson",
                                  "turn-owners/x.lock", "telegram-pairing.json"])
def test_a_write_to_a_runtime_control_secret_is_a_trust_config_change(world: FsWorld, name: str):
    got = classify_fs_mutation("write", [world.state / name], world.ws, state_dirs=[world.state])
    assert got.category == TRUST_CATEGORY


def test_the_secret_set_names_the_serve_folder_as_written_and_canonical(tmp_path: Path):
    real = tmp_path / "real-state"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    roots = secret_roots([tmp_path / "alias"])
    assert str(tmp_path / "alias" / "serve") in roots and str(real / "serve") in roots
