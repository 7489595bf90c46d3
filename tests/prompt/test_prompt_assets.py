"""Compiled prompt templates are kept under the state dir, and the cache can never change a
prompt or fail a render."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.prompt.prompt_assets import TEMPLATE_BYTECODE, PromptAssets


def render(state: Path, name: str = "t.j2", **context: object) -> str:
    return PromptAssets(state).env().get_template(name).render(**context)


def test_a_second_start_loads_the_compiled_template_and_renders_the_same_bytes(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{% for x in xs %}[{{ x }}]{% endfor %}\n")
    first = render(tmp_path, xs=[1, 2])
    cached = list((tmp_path / TEMPLATE_BYTECODE).iterdir())
    assert first == "[1][2]" and len(cached) == 1
    assert render(tmp_path, xs=[1, 2]) == first


def test_an_edited_template_is_compiled_again_never_served_stale(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    template = tmp_path / "templates" / "t.j2"
    template.write_text("old {{ v }}\n")
    assert render(tmp_path, v=1) == "old 1\n"
    template.write_text("new {{ v }}\n")
    assert render(tmp_path, v=1) == "new 1\n"


def test_a_full_disk_under_the_cache_costs_only_the_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import errno

    import jinja2.bccache

    def no_space(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jinja2.bccache.tempfile, "NamedTemporaryFile", no_space)
    assert render(tmp_path, "variable_tail.j2", **_tail_context()).startswith("### world")
    assert list((tmp_path / TEMPLATE_BYTECODE).iterdir()) == []


def test_a_cache_path_taken_by_a_file_costs_only_the_compile(tmp_path: Path):
    (tmp_path / "cache").mkdir()
    (tmp_path / TEMPLATE_BYTECODE).write_text("not a folder")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("ok {{ v }}\n")
    assert render(tmp_path, v=2) == "ok 2\n"


def test_the_cache_folder_is_private_to_the_user(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("x\n")
    render(tmp_path)
    assert (tmp_path / TEMPLATE_BYTECODE).stat().st_mode & 0o077 == 0


def _tail_context() -> dict[str, object]:
    return {"loaded_tools": [], "memory_sections": [], "recall_sections": [], "session_facts": [], "world": "w",
            "notices": [], "today": "2026-12-04", "conversation": [], "request": "", "earlier_summary": "", "tools": [],
            "file_kinds": ()}
