"""The fs categorisation funnel: realpath containment, dangling links, trust_config, kinds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from atomic_agent.plugins.os.fs_approval.canonical_target import canonicalize_target, is_within
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import classify_fs_mutation
from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    root = tmp_path.resolve()
    home, outside = root / "home", root / "outside"
    ws, state = home / "ws", home / ".atomic-agent"
    for d in (ws, state, outside):
        d.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return {"home": home, "ws": ws, "state": state, "outside": outside}


def cat(world: dict[str, Path], target: Path | str, kind: str = "write") -> str:
    return classify_fs_mutation(kind, [target], world["ws"], trust_config_paths(world["state"])).category


def test_workspace_containment_is_realpath_based(world) -> None:
    ws, outside = world["ws"], world["outside"]
    (ws / "link").symlink_to(outside, target_is_directory=True)
    assert cat(world, ws / "new.txt") == "fs_write_workspace"
    assert cat(world, ws / "sub" / "deeper" / "new.txt") == "fs_write_workspace"  # deepest existing ancestor
    assert cat(world, ws / "link" / "x.txt") == "other"  # lexically inside, really outside
    assert cat(world, ws / ".." / ".." / "outside" / "x.txt") == "other"


def test_sibling_with_a_common_prefix_is_not_the_workspace(world) -> None:
    sibling = world["ws"].parent / (world["ws"].name + "2")
    sibling.mkdir()
    assert cat(world, sibling / "secret.txt") == "fs_write_home"


def test_workspace_reached_through_a_symlinked_cwd_is_still_the_workspace(world, tmp_path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(world["ws"], target_is_directory=True)
    result = classify_fs_mutation("write", [alias / "a.txt"], alias, ())
    assert result.category == "fs_write_workspace"


def test_dangling_symlink_outside_is_classified_by_target(world) -> None:
    leak = world["ws"] / "leak.txt"
    leak.symlink_to(world["outside"] / "not-yet.txt")
    result = classify_fs_mutation("write", [leak], world["ws"], ())
    assert result.category == "other" and result.targets[0].canonical == world["outside"] / "not-yet.txt"


def test_dangling_symlink_inside_stays_workspace(world) -> None:
    (world["ws"] / "future.txt").symlink_to(world["ws"] / "later" / "f.txt")
    assert cat(world, world["ws"] / "future.txt") == "fs_write_workspace"


def test_dangling_symlink_to_home_is_home(world) -> None:
    (world["ws"] / "h.txt").symlink_to(world["home"] / "h.txt")
    assert cat(world, world["ws"] / "h.txt") == "fs_write_home"


def test_symlink_chain_is_classified_by_its_final_target(world) -> None:
    ws = world["ws"]
    (ws / "c").symlink_to(world["outside"] / "final.txt")  # dangling end
    (ws / "b").symlink_to(ws / "c")
    (ws / "a").symlink_to(ws / "b")
    assert cat(world, ws / "a") == "other"


def test_dangling_directory_link_in_the_middle_is_followed(world) -> None:
    (world["ws"] / "d").symlink_to(world["outside"] / "missing-dir", target_is_directory=True)
    assert cat(world, world["ws"] / "d" / "x.txt") == "other"


def test_unresolvable_link_loop_falls_to_other(world) -> None:
    ws = world["ws"]
    (ws / "loop1").symlink_to(ws / "loop2")
    (ws / "loop2").symlink_to(ws / "loop1")
    assert canonicalize_target(ws / "loop1") is None
    assert cat(world, ws / "loop1" / "x") == "other"


def test_nul_byte_path_is_unplaceable(world) -> None:
    assert canonicalize_target(str(world["ws"]) + "/a\x00b") is None


def test_outside_home_and_workspace_is_other(world) -> None:
    assert cat(world, world["outside"] / "x.txt") == "other"


def test_trash_categories(world) -> None:
    (world["ws"] / "f").write_text("x")
    assert cat(world, world["ws"] / "f", "trash") == "fs_trash"
    assert cat(world, world["home"] / "g", "trash") == "fs_trash"
    assert cat(world, world["outside"] / "g", "trash") == "other"


def test_extract_is_home_level_even_inside_the_workspace(world) -> None:
    assert cat(world, world["ws"] / "unpacked", "extract") == "fs_write_home"
    assert cat(world, world["outside"] / "unpacked", "extract") == "other"


def test_trust_config_write_matches_by_canonical_path(world) -> None:
    state = world["state"]
    (state / "config.json").write_text("{}")
    (world["ws"] / "cfg").symlink_to(state / "config.json")
    assert cat(world, state / "config.json") == "trust_config"
    assert cat(world, world["ws"] / "cfg") == "trust_config"
    assert cat(world, world["ws"] / ".." / ".atomic-agent" / "config.json") == "trust_config"
    assert cat(world, state / ".env") == "trust_config"  # fresh install: .env does not exist yet


def test_multi_target_request_asks_under_its_strictest_target(world) -> None:
    state = world["state"]
    targets = [world["ws"] / "a", world["home"] / "b", state / "config.json"]
    assert classify_fs_mutation("write", targets, world["ws"], trust_config_paths(state)).category == "trust_config"
    assert classify_fs_mutation("write", targets[:2], world["ws"], ()).category == "fs_write_home"


def test_persistence_spots_never_count_as_workspace_or_home(world) -> None:
    (world["ws"] / ".git" / "hooks").mkdir(parents=True)
    assert cat(world, world["ws"] / ".git" / "hooks" / "pre-commit") == "persistence"
    assert cat(world, world["home"] / ".bashrc") == "persistence"
    assert cat(world, world["home"] / ".ssh" / "authorized_keys") == "persistence"
    assert cat(world, world["ws"] / ".github" / "ci.yml") == "fs_write_workspace"


def test_is_within_is_not_a_string_prefix_test() -> None:
    assert is_within(Path("/a/ws/x"), Path("/a/ws")) and is_within(Path("/a/ws"), Path("/a/ws"))
    assert not is_within(Path("/a/ws2/x"), Path("/a/ws"))


def test_unknown_kind_is_refused(world) -> None:
    with pytest.raises(ValueError, match="kind"):
        classify_fs_mutation("delete", [world["ws"] / "x"], world["ws"], ())


def test_home_itself_when_cwd_is_home(world, monkeypatch) -> None:
    # cwd = $HOME: writes under home are workspace writes, except the persistence spots
    result = classify_fs_mutation("write", [world["home"] / "notes.txt", world["home"] / ".profile"],
                                  world["home"], ())
    assert [t.category for t in result.targets] == ["fs_write_workspace", "persistence"]
    assert os.path.expanduser("~") == str(world["home"])
