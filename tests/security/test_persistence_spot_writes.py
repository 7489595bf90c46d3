"""Writes that plant something that runs later ask under `persistence` at every level below 5,
by name wherever they are, through every writing tool (write, edit, patch, archive extraction).

The person answers no in every case here: the file must stay as it was.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import approval_gate
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate
from atomic_agent.plugins.os.fs_approval.fs_categories import PERSISTENCE, SENSITIVE_READ
from atomic_agent.plugins.os.fs_approval.persistence_spots import persistence_reason
from tests.plugins.os.fs_kit import FsWorld, make_world

SPOTS = [
    "ws/.git/config", "ws/.git/hooks/pre-commit", "ws/.git/info/attributes", "ws/vendor/lib/.git/config",
    "ws/vendor/lib/.git/hooks/post-checkout", "ws/a/b/c/.git/hooks/pre-push", "ws/.git/modules/sub/config",
    "ws/bare.git/hooks/update", "ws/.git", "ws/.bashrc", "ws/sub/.profile", ".bashrc", ".bash_aliases",
    ".bash_profile", ".zshrc", ".zshenv", ".profile", ".envrc", "ws/.envrc", ".gitconfig", ".config/git/config",
    ".config/git/attributes", ".config/fish/config.fish", ".config/fish/conf.d/x.fish",
    ".local/lib/python3.11/site-packages/evil.pth", "ws/.venv/lib/python3.11/site-packages/x.pth",
    "ws/sitecustomize.py", ".local/lib/python3.11/site-packages/usercustomize.py", ".config/autostart/x.desktop",
    ".config/systemd/user/x.service", "Library/LaunchAgents/x.plist", ".ssh/authorized_keys", ".ssh/config",
    "ws/.ssh/config", ".pam_environment", ".xprofile", ".inputrc", "ws/etc/profile.d/x.sh",
]
NOT_SPOTS = ["ws/model.pth", "ws/.github/workflows/ci.yml", "ws/src/hooks/useThing.ts", "ws/git/config.txt",
             "ws/notes/bashrc.md", "ws/gitconfig.example", "ws/site-packages.txt"]


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: Any) -> FsWorld:
    built = make_world(tmp_path, monkeypatch, level=4)
    built.gate = ApprovalGate([*STANDARD_CATEGORIES, PERSISTENCE, SENSITIVE_READ], 4, built.asker,
                              audit=ApprovalAuditLog(approval_gate.audit_path(built.state)))
    return built


def target(world: FsWorld, rel: str) -> Path:
    return world.home / rel


@pytest.mark.parametrize("rel", SPOTS)
def test_every_persistence_spot_is_recognised_by_name(world: FsWorld, rel: str):
    assert persistence_reason(target(world, rel)) is not None


@pytest.mark.parametrize("rel", NOT_SPOTS)
def test_ordinary_files_with_similar_names_are_not_persistence_spots(world: FsWorld, rel: str):
    assert persistence_reason(target(world, rel)) is None


@pytest.mark.parametrize("rel", SPOTS)
async def test_writing_a_persistence_spot_asks_at_level_4_and_a_no_writes_nothing(world: FsWorld, rel: str):
    path = target(world, rel)
    if rel.endswith(".git"):
        path.parent.mkdir(parents=True, exist_ok=True)
    result = await world.call("os.fs.write", {"path": str(path), "content": "planted\n", "createDirs": True})
    assert world.asker.categories == ["persistence"], (rel, world.asker.categories)
    assert result.status == "error" and not path.exists()


@pytest.mark.parametrize("rel", ["ws/.git/config", ".bashrc", "ws/vendor/.git/hooks/pre-commit", ".gitconfig"])
async def test_editing_a_persistence_spot_asks(world: FsWorld, rel: str):
    path = target(world, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("original\n")
    result = await world.call("os.fs.edit", {"path": str(path), "old": "original", "new": "planted"})
    assert "persistence" in world.asker.categories and result.status == "error"
    assert path.read_text() == "original\n"


@pytest.mark.parametrize("rel", ["ws/.git/hooks/pre-commit", "ws/lib/.git/config", "ws/.bashrc"])
async def test_a_patch_creating_a_persistence_spot_asks(world: FsWorld, rel: str):
    path = target(world, rel)
    path.parent.mkdir(parents=True, exist_ok=True)
    name = str(path.relative_to(world.ws))
    patch = f"--- /dev/null\n+++ b/{name}\n@@ -0,0 +1 @@\n+planted\n"
    result = await world.call("os.fs.patch", {"patch": patch, "dryRun": False})
    assert world.asker.categories == ["persistence"] and result.status == "error" and not path.exists()


@pytest.mark.parametrize("member", ["repo/.git/hooks/post-merge", "repo/.git/config", "deep/x/.git/hooks/pre-push",
                                    "home/.bashrc", "pkg/site-packages/evil.pth", "sitecustomize.py"])
async def test_archive_extraction_with_a_persistence_member_asks(world: FsWorld, tmp_path: Path, member: str):
    source = tmp_path / "src-tree" / member
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text("planted\n")
    archive = world.ws / "bundle.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(source, arcname=member)
    result = await world.call("os.fs.archive.extract", {"path": "bundle.tar", "dest": "unpacked"})
    assert world.asker.categories == ["persistence"] and result.status == "error"
    assert not (world.ws / "unpacked").exists()


async def test_the_state_dirs_templates_and_skills_are_persistence_spots(world: FsWorld):
    for rel in ("templates/system.j2", "skills/deploy/run.sh"):
        result = await world.call("os.fs.write", {"path": str(world.state / rel), "content": "x",
                                                  "createDirs": True})
        assert result.status == "error"
    assert world.asker.categories == ["persistence", "persistence"]


async def test_a_symlinked_git_dir_still_names_a_repository(world: FsWorld):
    real = world.root / "elsewhere"
    real.mkdir()
    (world.ws / ".git").symlink_to(real, target_is_directory=True)
    result = await world.call("os.fs.write", {"path": str(world.ws / ".git" / "config"), "content": "x"})
    assert world.asker.categories == ["persistence"] and result.status == "error"
    assert not (real / "config").exists()


async def test_level_5_writes_a_persistence_spot_without_asking(world: FsWorld):
    world.gate.set_level(5)
    result = await world.call("os.fs.write", {"path": str(world.home / ".bashrc"), "content": "alias ll='ls -l'\n"})
    assert result.status == "ok" and world.asker.categories == []


async def test_a_session_grant_cannot_silence_persistence(world: FsWorld):
    with pytest.raises(ValueError, match="cannot be granted"):
        world.gate.grant(world.session_id, "persistence")
