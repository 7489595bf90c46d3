"""The trust_config escalation guard: config.json, .env and the audit log ask below level 5."""

from __future__ import annotations

import json

import pytest

from atomic_agent.api import ApprovalAnswer
from tests.plugins.os.fs_archive_kit import make_zip
from tests.plugins.os.fs_kit import make_world

RAISE_LEVEL = json.dumps({"version": 1, "agent": {"approvalLevel": 5}})


@pytest.mark.parametrize("level", [1, 2, 3, 4])
async def test_trust_config_write_asks_below_level_5(tmp_path, monkeypatch, level) -> None:
    w = make_world(tmp_path, monkeypatch, level=level)
    before = (w.state / "config.json").read_text()
    r = await w.call("os.fs.write", {"path": str(w.state / "config.json"), "content": RAISE_LEVEL})
    assert r.status == "error" and w.asker.categories == ["trust_config"]
    assert (w.state / "config.json").read_text() == before


async def test_trust_config_write_is_silent_only_at_full_trust(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    assert (await w.call("os.fs.write", {"path": str(w.state / "config.json"), "content": "{}"})).status == "ok"
    assert w.asker.requests == []


async def test_trust_config_write_through_a_symlink_is_caught(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.state / "config.json").write_text("{}")
    (w.ws / "settings.json").symlink_to(w.state / "config.json")
    r = await w.call("os.fs.write", {"path": "settings.json", "content": RAISE_LEVEL})
    assert r.status == "error" and w.asker.categories == ["trust_config"]
    assert (w.state / "config.json").read_text() == "{}"


async def test_trust_config_write_through_a_dotdot_detour_is_caught(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    r = await w.call("os.fs.write", {"path": "../ws/../.atomic-agent/./config.json", "content": RAISE_LEVEL})
    assert r.status == "error" and w.asker.categories == ["trust_config"]


async def test_dotenv_on_a_fresh_install_is_trust_config(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    assert not (w.state / ".env").exists()
    r = await w.call("os.fs.write", {"path": str(w.state / ".env"), "content": "TELEGRAM_BOT_TOKEN=attacker\n"})
    assert r.status == "error" and w.asker.categories == ["trust_config"] and not (w.state / ".env").exists()


async def test_dangling_symlink_to_a_not_yet_existing_dotenv_is_caught(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.ws / "tokens").symlink_to(w.state / ".env")
    assert (await w.call("os.fs.write", {"path": "tokens", "content": "X=1"})).status == "error"
    assert w.asker.categories == ["trust_config"]


async def test_edit_of_config_json_asks_trust_config_where_home_writes_are_silent(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.state / "config.json").write_text('{"agent": {"approvalLevel": 4}}')
    (w.home / "other.txt").write_text("a")
    assert (await w.call("os.fs.edit", {"path": "~/other.txt", "old": "a", "new": "b"})).status == "ok"
    r = await w.call("os.fs.edit", {"path": str(w.state / "config.json"), "old": '"approvalLevel": 4',
                                    "new": '"approvalLevel": 5'})
    assert r.status == "error" and w.asker.categories == ["trust_config"]


async def test_patch_batch_that_includes_config_json_asks_trust_config(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.ws / "a.txt").write_text("a\n")
    (w.state / "config.json").write_text("{}\n")
    patch = (f"--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-a\n+b\n"
             f"--- {w.state}/config.json\n+++ {w.state}/config.json\n@@ -1 +1 @@\n-{{}}\n+{RAISE_LEVEL}\n")
    r = await w.call("os.fs.patch", {"patch": patch, "dryRun": False})
    assert r.status == "error" and w.asker.categories == ["trust_config"]
    assert (w.ws / "a.txt").read_text() == "a\n"


async def test_trash_of_config_json_or_of_the_state_dir_asks_trust_config(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.state / "config.json").write_text("{}")
    assert (await w.call("os.fs.trash", {"path": str(w.state / "config.json")})).status == "error"
    assert (await w.call("os.fs.trash", {"path": str(w.state)})).status == "error"
    assert w.asker.categories == ["trust_config", "trust_config"] and (w.state / "config.json").exists()


async def test_audit_log_is_part_of_the_trust_surface(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    await w.call("os.fs.write", {"path": "x.txt", "content": "x"})  # logs one decision
    r = await w.call("os.fs.write", {"path": str(w.state / "audit" / "approvals.ndjson"), "content": ""})
    assert r.status == "error" and w.asker.categories == ["trust_config"] and w.audit()


async def test_extracting_an_archive_onto_config_json_asks_trust_config(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    make_zip(w.ws / "settings.zip", {"config.json": RAISE_LEVEL.encode()})
    before = (w.state / "config.json").read_text()
    r = await w.call("os.fs.archive.extract", {"path": "settings.zip", "dest": str(w.state), "overwrite": True})
    assert r.status == "error" and w.asker.categories == ["trust_config"]
    assert (w.state / "config.json").read_text() == before


async def test_state_dir_reached_through_a_symlinked_home_path_is_still_caught(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=4)
    (w.ws / "state-link").symlink_to(w.state, target_is_directory=True)
    assert (await w.call("os.fs.write", {"path": "state-link/config.json", "content": "{}"})).status == "error"
    assert w.asker.categories == ["trust_config"]


async def test_approving_a_trust_config_write_once_writes_it(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=1, answers=[ApprovalAnswer.once()])
    assert (await w.call("os.fs.write", {"path": str(w.state / "config.json"), "content": "{}"})).status == "ok"
    assert w.asker.requests[0].label == "agent trust config"
