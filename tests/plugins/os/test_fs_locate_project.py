"""os.fs.locate_project, pinned to §"Project path resolution"."""

from __future__ import annotations

import os

import attrs

from atomic_agent.api import Tier
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.locate_project_tool import make_locate_project
from atomic_agent.plugins.os.fs.projects_config import ProjectsConfig
from atomic_agent.sessions.session_store import SessionStore
from tests.plugins.os.fs_kit import make_world


def _roots_world(tmp_path, monkeypatch, roots, **kw):
    return make_world(tmp_path, monkeypatch, config={"projects": {"roots": roots}}, **kw)


async def test_direct_path_fast_path(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.home / "dev" / "app").mkdir(parents=True)
    r = await w.call("os.fs.locate_project", {"name": "~/dev/app"})
    assert r.details["found"] and r.details["source"] == "direct-path" and r.details["path"] == str(w.home / "dev" / "app")


async def test_cwd_chain_matches_an_ancestor(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    deep = w.ws / "raylib" / "src" / "core"
    deep.mkdir(parents=True)
    r = await w.call("os.fs.locate_project", {"name": "raylib"}, working_dir=deep)
    assert r.details["found"] and r.details["path"] == str(w.ws / "raylib") and r.details["source"] == "cwd"


async def test_configured_roots_one_level_deep_with_tiers(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, [str(tmp_path / "outside" / "projects")])
    root = w.outside / "projects"
    for name in ("raylib", "raylib-extras", "my-raylib-fork"):
        (root / name).mkdir(parents=True)
    (root / "deep" / "raylib2").mkdir(parents=True)  # two levels down: never scanned
    r = await w.call("os.fs.locate_project", {"name": "RayLib"})
    assert r.details["found"] and r.details["path"] == str(root / "raylib")
    assert "weaker matches" in r.summary and "raylib2" not in r.summary


async def test_no_disk_wide_scanning_with_empty_roots(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.outside / "raylib").mkdir()
    r = await w.call("os.fs.locate_project", {"name": "raylib"})
    assert not r.details["found"] and "0 configured root(s) scanned" in r.summary


async def test_ambiguity_is_surfaced_not_resolved(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, [str(tmp_path / "outside" / "a"), str(tmp_path / "outside" / "b")])
    (w.outside / "a" / "app").mkdir(parents=True)
    (w.outside / "b" / "app").mkdir(parents=True)
    r = await w.call("os.fs.locate_project", {"name": "app", "limit": 1})
    assert r.details["found"] is False and r.details["ambiguous"] and "Ask the user" in r.summary
    assert "do not guess" in r.summary


async def test_miss_is_honest_and_notes_live_in_the_summary(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, ["relative/dir", "", str(tmp_path / "outside" / "missing")])
    r = await w.call("os.fs.locate_project", {"name": "zzz"})
    assert not r.details["found"] and "0 configured root(s) scanned" in r.summary
    assert "note: projects.roots entry 'relative/dir' skipped" in r.summary
    assert "could not be read" in r.summary and "projects.roots" in r.summary
    assert r.details["invalidRoots"] == ["relative/dir", ""]


async def test_hidden_dependency_and_symlinked_dirs_never_match(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, [str(tmp_path / "outside")])
    (w.outside / ".app").mkdir()
    (w.outside / "node_modules").mkdir()
    (w.outside / "applink").symlink_to(w.ws, target_is_directory=True)
    (w.outside / "app.txt").write_text("a file, not a dir")
    r = await w.call("os.fs.locate_project", {"name": "app"})
    assert not r.details["found"]
    assert not (await w.call("os.fs.locate_project", {"name": "node_modules"})).details["found"]


async def test_root_scan_cap_applies_after_filtering(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, [str(tmp_path / "outside")])
    for i in range(600):
        (w.outside / f"f{i}.txt").write_text("")  # loose files never use the cap
    (w.outside / "target").mkdir()
    assert (await w.call("os.fs.locate_project", {"name": "target"})).details["found"]


async def test_session_history_is_used_and_deleted_dirs_are_dropped(tmp_path, monkeypatch) -> None:
    state = (tmp_path / "home" / ".atomic-agent").resolve()
    state.mkdir(parents=True)
    store = SessionStore(state)
    w = make_world(tmp_path, monkeypatch, services={"sessions": store})
    (w.outside / "webshop").mkdir()
    (w.outside / "gone").mkdir()
    store.create(w.outside / "webshop")
    store.create(w.outside / "gone")
    (w.outside / "gone").rmdir()
    r = await w.call("os.fs.locate_project", {"name": "webshop"})
    assert r.details["found"] and r.details["source"] == "session-history"
    assert not (await w.call("os.fs.locate_project", {"name": "gone"})).details["found"]
    store.close()


def test_session_store_read_path_is_column_only(tmp_path) -> None:
    from atomic_agent.plugins.os.fs.locate_project_sources import recent_session_dirs

    (tmp_path / "state").mkdir()
    store = SessionStore(tmp_path / "state")
    store.create(tmp_path)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    found = recent_session_dirs(store)
    store.close()
    assert [c.path for c in found] == [tmp_path]
    assert [s.split(" limit")[0] for s in statements] == [
        "select working_dir from sessions order by updated_at desc"]  # no payload, no transcript


async def test_symlink_aliases_of_one_dir_are_not_an_ambiguity(tmp_path, monkeypatch) -> None:
    w = _roots_world(tmp_path, monkeypatch, [str(tmp_path / "outside"), str(tmp_path / "alias")])
    (w.outside / "proj").mkdir()
    os.symlink(w.outside, tmp_path / "alias")
    r = await w.call("os.fs.locate_project", {"name": "proj"})
    assert r.details["found"]


async def test_registered_projects_block_is_read(tmp_path) -> None:
    (tmp_path / "p" / "alpha").mkdir(parents=True)

    @attrs.frozen
    class Config:
        def block(self, key):
            return ProjectsConfig(roots=(str(tmp_path / "p"),))

    @attrs.frozen
    class View:
        config: object = Config()
        state_dir: object = tmp_path

        def service(self, name, default):
            return default  # provides nothing

    from atomic_agent.api import make_tool_context

    spec = make_locate_project(FsEnv(View()))
    r = await spec.run({"name": "alpha"}, make_tool_context(tmp_path / "p"))
    assert r.details["found"] and r.details["source"] == "configured-root"


def test_locate_project_is_pinned_pure_read_and_frequent_tier() -> None:
    from atomic_agent.api import ResourceClass

    spec = make_locate_project(FsEnv())
    assert spec.resource_class is ResourceClass.PURE_READ and spec.tier is Tier.FREQUENT


def test_descriptor_teaches_a_segment_only_name() -> None:
    spec = make_locate_project(FsEnv())
    assert '"name": "raylib"' in spec.example and "not a sentence" in spec.args_schema["properties"]["name"]["description"]
