"""One read guard for every tool that reads files, and the egress policy behind it.

The agent's `.env` is never read — by path, through a symlink or through a hard link —
by any reading tool. Credential stores ask under `sensitive_read`; a session that read one
asks under `sensitive_egress` before it sends anything to a host outside the allowlist.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext, approval_gate
from atomic_agent.approval.approval_audit_log import ApprovalAuditLog
from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES, ApprovalGate
from atomic_agent.plugins.os.fs_approval.credential_stores import credential_store_of, reset_index
from atomic_agent.plugins.os.fs_approval.fs_categories import PERSISTENCE, SENSITIVE_READ
from atomic_agent.plugins.os.fs_approval.sensitive_taint import TAINT
from atomic_agent.plugins.os.http.egress_policy import admit_egress
from atomic_agent.plugins.os.http.http_config import HttpConfig
from tests.plugins.os.fs_kit import FsWorld, make_world

SECRET = "sk-live-SECRET-0123456789"


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: Any) -> FsWorld:
    built = make_world(tmp_path, monkeypatch, level=4)
    built.gate = ApprovalGate([*STANDARD_CATEGORIES, PERSISTENCE, SENSITIVE_READ], 4, built.asker,
                              audit=ApprovalAuditLog(approval_gate.audit_path(built.state)))
    (built.state / ".env").write_text(f"OPENAI_API_KEY={SECRET}\n")
    reset_index()
    TAINT.clear()
    return built


def leaked(result: Any) -> bool:
    return SECRET in result.summary or SECRET in repr(dict(result.details))


def hard_link(world: FsWorld, name: str) -> Path:
    link = world.ws / name
    os.link(world.state / ".env", link)
    return link


READERS = [("os.fs.read", lambda p: {"path": p}), ("os.fs.hash", lambda p: {"path": p}),
           ("os.fs.diff", lambda p: {"a": p, "content": "x"}), ("os.fs.read_document", lambda p: {"path": p}),
           ("os.fs.archive.list", lambda p: {"path": p}),
           ("os.fs.archive.read_entry", lambda p: {"path": p, "entry": "x"}),
           ("os.fs.archive.extract", lambda p: {"path": p, "dest": "out"}),
           ("os.fs.edit", lambda p: {"path": p, "old": "OPENAI", "new": "X"})]


@pytest.mark.parametrize(("tool", "args"), READERS, ids=[t for t, _ in READERS])
@pytest.mark.parametrize("how", ["direct", "symlink", "hardlink", "dotdot"])
async def test_no_reading_tool_returns_the_dotenv(world: FsWorld, tool: str, args: Any, how: str):
    if how == "direct":
        path = str(world.state / ".env")
    elif how == "symlink":
        (world.ws / "cfg.zip").symlink_to(world.state / ".env")
        path = "cfg.zip"
    elif how == "hardlink":
        path = hard_link(world, "cfg.zip").name
    else:
        path = str(world.ws / ".." / ".atomic-agent" / ".env")
    result = await world.call(tool, args(path))
    assert result.status == "error" and not leaked(result)
    assert (world.state / ".env").read_text() == f"OPENAI_API_KEY={SECRET}\n"


async def test_a_hard_link_to_dotenv_as_diff_b_is_refused(world: FsWorld):
    (world.ws / "a.txt").write_text("x\n")
    hard_link(world, "b.txt")
    result = await world.call("os.fs.diff", {"a": "a.txt", "b": "b.txt"})
    assert result.status == "error" and not leaked(result)


async def test_a_patch_cannot_probe_the_dotenv_through_a_hard_link(world: FsWorld):
    hard_link(world, "probe.txt")
    patch = "--- a/probe.txt\n+++ b/probe.txt\n@@ -1 +1 @@\n-OPENAI_API_KEY=sk\n+x\n"
    result = await world.call("os.fs.patch", {"patch": patch, "dryRun": True})
    assert result.status == "error" and "secrets" in result.summary


@pytest.mark.parametrize("where", ["state", "hardlink", "nested"])
async def test_grep_never_returns_dotenv_lines(world: FsWorld, where: str):
    if where == "hardlink":
        hard_link(world, "copy.txt")
        root = str(world.ws)
    elif where == "nested":
        (world.ws / "deep" / "er").mkdir(parents=True)
        os.link(world.state / ".env", world.ws / "deep" / "er" / ".hidden")
        root = str(world.ws)
    else:
        root = str(world.state)
    result = await world.call("os.fs.grep", {"pattern": "sk-live", "path": root, "hidden": True})
    assert result.status == "ok" and not leaked(result)
    assert result.details["withheldSecretFiles"] == 1


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/thread-self/environ", "/proc/self/mem",
                                  f"/proc/{os.getpid()}/environ", "/proc/self/task/{tid}/environ"])
async def test_the_process_environment_is_never_read(world: FsWorld, path: str):
    result = await world.call("os.fs.read", {"path": path.format(tid=os.getpid())})
    assert result.status == "error"


STORES = [".ssh/id_ed25519", ".ssh/config", ".aws/credentials", ".config/gcloud/credentials.db", ".azure/token",
          ".kube/config", ".docker/config.json", ".netrc", ".git-credentials", ".pgpass", ".npmrc", ".pypirc",
          ".gnupg/private-keys-v1.d/k.key", ".password-store/bank.gpg", ".local/share/keyrings/login.keyring",
          ".mozilla/firefox/p.default/logins.json", ".config/google-chrome/Default/Login Data",
          ".config/chromium/Default/Cookies", ".config/BraveSoftware/Brave-Browser/Default/Cookies",
          "Library/Keychains/login.keychain-db", ".vault-token", ".config/gh/hosts.yml"]


@pytest.mark.parametrize("rel", STORES)
async def test_reading_a_credential_store_asks_and_a_no_reads_nothing(world: FsWorld, rel: str):
    path = world.home / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("TOPSECRETCREDENTIAL\n")
    result = await world.call("os.fs.read", {"path": str(path)})
    assert world.asker.categories == ["sensitive_read"]
    assert result.status == "error" and "TOPSECRETCREDENTIAL" not in result.summary


async def test_a_hard_link_to_an_ssh_key_inside_the_workspace_still_asks(world: FsWorld):
    key = world.home / ".ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text("PRIVATE\n")
    os.link(key, world.ws / "innocent.txt")
    result = await world.call("os.fs.read", {"path": "innocent.txt"})
    assert world.asker.categories == ["sensitive_read"] and "PRIVATE" not in result.summary
    assert credential_store_of(world.ws / "innocent.txt", os.stat(world.ws / "innocent.txt"),
                               home=world.home) == "~/.ssh"


async def test_grep_over_home_withholds_credential_store_files(world: FsWorld):
    (world.home / ".aws").mkdir()
    (world.home / ".aws" / "credentials").write_text("aws_secret_access_key = ABCDEF\n")
    (world.ws / "code.py").write_text("key = 'ABCDEF'\n")
    result = await world.call("os.fs.grep", {"pattern": "ABCDEF", "path": str(world.home), "hidden": True})
    assert [m["path"] for m in result.details["matches"]] == ["ws/code.py"]
    assert result.details["withheldStoreFiles"] == 1 and world.asker.categories == []


async def test_grep_rooted_in_a_credential_store_asks_once(world: FsWorld):
    (world.home / ".ssh").mkdir()
    (world.home / ".ssh" / "config").write_text("Host x\n")
    result = await world.call("os.fs.grep", {"pattern": "Host", "path": str(world.home / ".ssh")})
    assert world.asker.categories == ["sensitive_read"] and result.status == "error"


async def test_an_approved_credential_read_marks_the_session(world: FsWorld):
    from atomic_agent.api import ApprovalAnswer

    world.asker.answers.append(ApprovalAnswer.once())
    (world.home / ".netrc").write_text("machine x login y password z\n")
    result = await world.call("os.fs.read", {"path": str(world.home / ".netrc")})
    assert result.status == "ok" and TAINT.reads_of(world.session_id) == ["~/.netrc"]
    assert TAINT.reads_of("another-session") == []


class Asked:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.categories: list[str] = []

    async def __call__(self, category: str, summary: str, **_extra: Any) -> bool:
        self.categories.append(category)
        return self.answer


def egress_ctx(asked: Asked, session: str = "egress") -> ToolContext:
    return ToolContext(session, Path("/tmp"), Path("/tmp"), asyncio.Event(), asked)


@pytest.mark.parametrize(("tainted", "listed", "mode", "gate", "expected"), [
    (False, False, "gate", False, ["http"]), (False, True, "allowlist", False, []), (False, True, "gate", False, []),
    (False, True, "gate", True, ["http"]), (False, False, "allowlist", True, ["http"]),
    (True, False, "gate", False, ["sensitive_egress"]), (True, False, "allowlist", True, ["sensitive_egress"]),
    (True, True, "allowlist", False, []), (True, True, "gate", True, ["http"]),
])
async def test_the_egress_policy_asks_by_destination_and_by_what_the_session_read(tainted, listed, mode, gate,
                                                                                  expected):
    TAINT.clear()
    if tainted:
        TAINT.mark("egress", "~/.ssh")
    config = HttpConfig(approval_mode=mode, allowed_hosts=("api.listed.example",) if listed else ())
    asked = Asked(False)
    decision = await admit_egress(egress_ctx(asked), "os.web.fetch", "GET", "https://api.listed.example/x",
                                  "api.listed.example", config, always_gate=gate)
    assert asked.categories == expected
    assert decision.allowed is (expected == [])


async def test_allowlist_only_refuses_an_unlisted_host_without_asking():
    asked = Asked(True)
    decision = await admit_egress(egress_ctx(asked), "os.http.request", "POST", "https://evil.example/", "evil.example",
                                  HttpConfig(approval_mode="allowlist-only"))
    assert decision.refused and not decision.allowed and asked.categories == []


async def test_sensitive_egress_always_asks_below_5_and_cannot_be_granted(world: FsWorld):
    from atomic_agent.api import ApprovalCategory

    gate = ApprovalGate([*STANDARD_CATEGORIES, ApprovalCategory("sensitive_egress", 5, "x", grantable=False)], 4)
    assert not gate.auto_approves("sensitive_egress") and gate.auto_approves("http")
    with pytest.raises(ValueError):
        gate.grant("s", "sensitive_egress")

