"""os.fs.trash: move into `<state>/trash`, list, restore."""

from __future__ import annotations

from tests.plugins.os.fs_kit import make_world


async def test_trash_moves_and_restores(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=3)
    (w.ws / "build").mkdir()
    (w.ws / "build" / "out.o").write_text("obj")
    moved = await w.call("os.fs.trash", {"path": "build"})
    assert moved.status == "ok" and not (w.ws / "build").exists()
    entry = moved.details["id"]
    assert (w.state / "trash" / entry / "item" / "out.o").read_text() == "obj"
    listed = await w.call("os.fs.trash", {"action": "list"})
    assert entry in listed.summary and str(w.ws / "build") in listed.summary
    restored = await w.call("os.fs.trash", {"action": "restore", "id": entry})
    assert restored.status == "ok" and (w.ws / "build" / "out.o").read_text() == "obj"
    assert not (w.state / "trash" / entry).exists()


async def test_trash_asks_as_fs_trash_below_level_3(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    (w.ws / "f").write_text("x")
    r = await w.call("os.fs.trash", {"path": "f"})
    assert r.status == "error" and w.asker.categories == ["fs_trash"] and (w.ws / "f").exists()


async def test_trash_of_a_symlink_moves_the_link_not_its_target(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.outside / "precious").write_text("keep")
    (w.ws / "ln").symlink_to(w.outside / "precious")
    assert (await w.call("os.fs.trash", {"path": "ln"})).status == "ok"
    assert (w.outside / "precious").read_text() == "keep" and not (w.ws / "ln").is_symlink()


async def test_restore_refuses_to_overwrite_and_unknown_ids(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.ws / "f").write_text("1")
    entry = (await w.call("os.fs.trash", {"path": "f"})).details["id"]
    (w.ws / "f").write_text("2")
    assert "exists again" in (await w.call("os.fs.trash", {"action": "restore", "id": entry})).summary
    assert (w.ws / "f").read_text() == "2"
    assert "not a trash id" in (await w.call("os.fs.trash", {"action": "restore", "id": "../x"})).summary
    assert "no trash entry" in (await w.call("os.fs.trash", {"action": "restore", "id": "nope"})).summary
