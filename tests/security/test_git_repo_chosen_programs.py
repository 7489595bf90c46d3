"""A repository cannot make the read-only git tools run a program of its choosing.

Each test builds a real repository that names a program through one mechanism (the
program touches a marker file), first proves with plain `git` that the mechanism really
fires on that repository, then runs the os.git tool and checks the marker never appears.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.os.git.git_tools import git_tool_specs

GIT_ENV = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.com", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin",
           "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=check, capture_output=True, text=True,
                          env={**GIT_ENV, **(env or {})})
    return done.stdout


class Marker:
    """A program that leaves a marker file behind when git runs it."""

    def __init__(self, tmp_path: Path, name: str) -> None:
        self.path = tmp_path / f"ran-{name}"
        self.script = tmp_path / f"{name}.sh"
        self.script.write_text(f"#!/bin/sh\ntouch '{self.path}'\nexit 1\n")
        self.script.chmod(0o755)

    @property
    def fired(self) -> bool:
        return self.path.exists()

    def reset(self) -> None:
        self.path.unlink(missing_ok=True)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\ntwo\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")
    return root


async def tool(name: str, args: dict[str, Any], cwd: Path) -> Any:
    class Bare:
        config = None

    spec = next(s for s in git_tool_specs(Bare()) if s.name == name)
    return await spec.run(args, make_tool_context(cwd))


def proves(marker: Marker, repo: Path, *args: str) -> None:
    """Plain git on this repository really runs the program (the attack is live)."""
    marker.reset()
    git(repo, *args, check=False)
    assert marker.fired, f"plain `git {' '.join(args)}` did not run the repository's program: the setup is wrong"
    marker.reset()


def attribute(repo: Path, line: str) -> None:
    (repo / ".gitattributes").write_text(line + "\n")


async def test_clean_filter_from_gitattributes_does_not_run_on_diff_status_or_blame(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "clean")
    git(repo, "config", "filter.evil.clean", str(marker.script))
    attribute(repo, "*.txt filter=evil")
    (repo / "a.txt").write_text("one\ntwo\nthree\n")
    proves(marker, repo, "diff")
    for name, args in (("os.git.diff", {}), ("os.git.status", {}), ("os.git.blame", {"file": "a.txt"})):
        result = await tool(name, args, repo)
        assert result.status == "ok", result.summary
        assert not marker.fired, f"{name} ran the clean filter"


async def test_required_filter_with_no_program_does_not_break_the_tool(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "required")
    git(repo, "config", "filter.evil.clean", str(marker.script))
    git(repo, "config", "filter.evil.required", "true")
    attribute(repo, "*.txt filter=evil")
    (repo / "a.txt").write_text("changed\n")
    result = await tool("os.git.diff", {}, repo)
    assert result.status == "ok" and not marker.fired and result.details["files"][0]["path"] == "a.txt"


async def test_long_running_process_filter_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "process")
    git(repo, "config", "filter.evil.process", str(marker.script))
    attribute(repo, "*.txt filter=evil")
    (repo / "a.txt").write_text("changed\n")
    proves(marker, repo, "diff")
    await tool("os.git.diff", {}, repo)
    await tool("os.git.status", {}, repo)
    assert not marker.fired


async def test_smudge_filter_does_not_run_on_show(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "smudge")
    git(repo, "config", "filter.evil.smudge", str(marker.script))
    attribute(repo, "*.txt filter=evil")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-qm", "attrs")
    (repo / "a.txt").unlink()
    proves(marker, repo, "checkout", "--", "a.txt")  # checking the file out runs smudge
    for name, args in (("os.git.show", {}), ("os.git.diff", {"ref": "HEAD~1"}), ("os.git.log", {})):
        await tool(name, args, repo)
    assert not marker.fired


async def test_textconv_driver_does_not_run_on_diff_show_or_blame(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "textconv")
    git(repo, "config", "diff.evil.textconv", str(marker.script))
    attribute(repo, "*.txt diff=evil")
    git(repo, "add", ".gitattributes")
    (repo / "a.txt").write_text("one\nTWO\n")
    git(repo, "commit", "-qam", "second")
    proves(marker, repo, "blame", "a.txt")
    for name, args in (("os.git.diff", {"ref": "HEAD~1"}), ("os.git.show", {}), ("os.git.blame", {"file": "a.txt"})):
        result = await tool(name, args, repo)
        assert result.status == "ok", result.summary
    assert not marker.fired


async def test_external_diff_driver_from_gitattributes_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "extdiff")
    git(repo, "config", "diff.evil.command", str(marker.script))
    attribute(repo, "*.txt diff=evil")
    (repo / "a.txt").write_text("changed\n")
    proves(marker, repo, "diff")
    await tool("os.git.diff", {}, repo)
    assert not marker.fired


async def test_diff_external_from_repo_config_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "diffexternal")
    git(repo, "config", "diff.external", str(marker.script))
    (repo / "a.txt").write_text("changed\n")
    proves(marker, repo, "diff")
    await tool("os.git.diff", {}, repo)
    git(repo, "commit", "-qam", "x")
    await tool("os.git.show", {}, repo)
    assert not marker.fired


async def test_fsmonitor_hook_does_not_run_on_status(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "fsmonitor")
    git(repo, "config", "core.fsmonitor", str(marker.script))
    proves(marker, repo, "status")
    result = await tool("os.git.status", {}, repo)
    assert result.status == "ok" and not marker.fired


def signed_commit(repo: Path, kind: str) -> str:
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    body = (f"tree {tree}\nparent {head}\nauthor Ada <a@b> 1700000000 +0000\ncommitter Ada <a@b> 1700000000 +0000\n"
            f"gpgsig -----BEGIN {kind} SIGNATURE-----\n \n U0lHTkFUVVJF\n -----END {kind} SIGNATURE-----\n\nsigned\n")
    sha = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"], input=body,
                         text=True, capture_output=True, check=True, env=GIT_ENV).stdout.strip()
    git(repo, "update-ref", "refs/heads/main", sha)
    return sha


async def test_gpg_signature_program_does_not_run_on_log_or_show(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "gpg")
    signed_commit(repo, "PGP")
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.program", str(marker.script))
    proves(marker, repo, "log", "-n1")
    for name in ("os.git.log", "os.git.show"):
        result = await tool(name, {}, repo)
        assert result.status == "ok", result.summary
    assert not marker.fired


async def test_ssh_signature_program_does_not_run_on_log(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "gpgssh")
    signed_commit(repo, "SSH")
    git(repo, "config", "log.showSignature", "true")
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "gpg.ssh.program", str(marker.script))
    git(repo, "config", "gpg.ssh.allowedSignersFile", str(tmp_path / "signers"))
    (tmp_path / "signers").write_text("")
    proves(marker, repo, "log", "-n1")
    await tool("os.git.log", {}, repo)
    await tool("os.git.show", {}, repo)
    assert not marker.fired


def partial_clone_with_missing_blob(repo: Path) -> None:
    blob = subprocess.run(["git", "-C", str(repo), "hash-object", "--stdin"], input="missing\n", text=True,
                          capture_output=True, check=True, env=GIT_ENV).stdout.strip()
    tree = subprocess.run(["git", "-C", str(repo), "mktree", "--missing"], input=f"100644 blob {blob}\tgone.txt\n",
                          text=True, capture_output=True, check=True, env=GIT_ENV).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-p", "HEAD", "-m", "lazy").strip()
    git(repo, "update-ref", "refs/heads/main", commit)
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.promisor", "true")


async def test_lazy_fetch_through_an_ext_transport_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "ext")
    partial_clone_with_missing_blob(repo)
    git(repo, "config", "remote.origin.url", f"ext::{marker.script}")
    git(repo, "config", "protocol.ext.allow", "always")
    proves(marker, repo, "show", "HEAD")
    await tool("os.git.show", {}, repo)
    await tool("os.git.diff", {"ref": "HEAD~1"}, repo)
    assert not marker.fired


async def test_lazy_fetch_through_core_ssh_command_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "sshcommand")
    partial_clone_with_missing_blob(repo)
    git(repo, "config", "remote.origin.url", "ssh://git@example.invalid/repo.git")
    git(repo, "config", "core.sshCommand", str(marker.script))
    proves(marker, repo, "show", "HEAD")
    await tool("os.git.show", {}, repo)
    assert not marker.fired


async def test_lazy_fetch_through_a_remote_upload_pack_does_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "uploadpack")
    partial_clone_with_missing_blob(repo)
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    git(repo, "config", "remote.origin.url", str(other))
    git(repo, "config", "remote.origin.uploadpack", str(marker.script))
    proves(marker, repo, "show", "HEAD")
    await tool("os.git.show", {}, repo)
    assert not marker.fired


async def test_credential_helper_is_never_asked(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "credential")
    partial_clone_with_missing_blob(repo)
    git(repo, "config", "remote.origin.url", "http://127.0.0.1:9/repo.git")
    git(repo, "config", "credential.helper", f"!{marker.script}")
    git(repo, "config", "credential.http://127.0.0.1:9.helper", f"!{marker.script}")
    await tool("os.git.show", {}, repo)
    assert not marker.fired


async def test_pager_settings_do_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "pager")
    git(repo, "config", "core.pager", str(marker.script))
    git(repo, "config", "pager.log", str(marker.script))
    git(repo, "config", "pager.status", str(marker.script))
    for name in ("os.git.log", "os.git.status", "os.git.diff", "os.git.show"):
        await tool(name, {}, repo)
    assert not marker.fired


async def test_hooks_of_the_repository_do_not_run(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "hook")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc", "fsmonitor-watchman"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch '{marker.path}'\n")
        (hooks / hook).chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    (repo / "a.txt").write_text("changed\n")
    os.utime(repo / "a.txt", (1, 1))  # stat info differs from the index: status refreshes
    for name, args in (("os.git.status", {}), ("os.git.diff", {}), ("os.git.log", {}), ("os.git.branch", {}),
                       ("os.git.blame", {"file": "a.txt"})):
        await tool(name, args, repo)
    assert not marker.fired


async def test_a_submodule_with_its_own_filter_is_never_entered(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "submodule")
    inner = tmp_path / "inner"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    (inner / "x.txt").write_text("x\n")
    git(inner, "add", ".")
    git(inner, "commit", "-qm", "inner")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    git(repo, "commit", "-qm", "sub")
    sub = repo / "sub"
    git(sub, "config", "filter.evil.clean", str(marker.script))
    (sub / ".gitattributes").write_text("*.txt filter=evil\n")
    (sub / "x.txt").write_text("y\n")  # same size: status has to hash it, through the filter
    os.utime(sub / "x.txt", (1, 1))
    proves(marker, repo, "status")
    await tool("os.git.status", {}, repo)
    await tool("os.git.diff", {}, repo)
    assert not marker.fired


async def test_a_driver_name_with_an_equals_sign_is_still_neutralised(repo: Path, tmp_path: Path):
    # `-c filter.a=b.clean=` would be parsed as key `filter.a` — the overrides go through the environment
    marker = Marker(tmp_path, "equals")
    git(repo, "config", "filter.a=b.clean", str(marker.script))
    attribute(repo, "*.txt filter=a=b")
    (repo / "a.txt").write_text("changed\n")
    if not (proves_quietly := _fires(marker, repo, "diff")):
        pytest.skip("this git does not accept '=' in an attribute value")
    assert proves_quietly
    await tool("os.git.diff", {}, repo)
    assert not marker.fired


def _fires(marker: Marker, repo: Path, *args: str) -> bool:
    marker.reset()
    git(repo, *args, check=False)
    fired = marker.fired
    marker.reset()
    return fired


async def test_an_included_config_file_is_neutralised_too(repo: Path, tmp_path: Path):
    marker = Marker(tmp_path, "include")
    extra = repo / "evil.gitconfig"
    extra.write_text(f"[filter \"inc\"]\n\tclean = {marker.script}\n")
    git(repo, "config", "include.path", str(extra))
    attribute(repo, "*.txt filter=inc")
    (repo / "a.txt").write_text("changed\n")
    proves(marker, repo, "diff")
    await tool("os.git.diff", {}, repo)
    await tool("os.git.status", {}, repo)
    assert not marker.fired
