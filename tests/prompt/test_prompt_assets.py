"""Compiled prompt templates are kept in the per-user cache, shared by state dirs, and the
cache can never change a prompt or fail a render."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.prompt.prompt_assets import ENV_OPTIONS, PromptAssets, template_cache_dir


def render(state: Path, name: str = "t.j2", cache: Path | None = None, **context: object) -> str:
    return PromptAssets(state, cache_dir=cache or state / "cache").env().get_template(name).render(**context)


def compiled(cache: Path) -> list[Path]:
    return list(template_cache_dir(cache).iterdir())


def test_a_second_start_loads_the_compiled_template_and_renders_the_same_bytes(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("{% for x in xs %}[{{ x }}]{% endfor %}\n")
    first = render(tmp_path, xs=[1, 2])
    assert first == "[1][2]" and len(compiled(tmp_path / "cache")) == 1
    assert render(tmp_path, xs=[1, 2]) == first


def test_a_new_state_dir_uses_the_templates_another_one_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import jinja2

    cache = tmp_path / "shared-cache"
    first = render(tmp_path / "state-a", "variable_tail_coached.j2", cache, **_tail_context())
    assert compiled(cache)

    def no_compile(*args: object, **kwargs: object) -> object:
        raise AssertionError("compiled again")

    monkeypatch.setattr(jinja2.Environment, "compile", no_compile)
    assert render(tmp_path / "state-b", "variable_tail_coached.j2", cache, **_tail_context()) == first


def test_an_overriding_template_in_one_state_dir_never_reaches_another(tmp_path: Path):
    cache = tmp_path / "shared-cache"
    (tmp_path / "a" / "templates").mkdir(parents=True)
    (tmp_path / "a" / "templates" / "variable_tail_coached.j2").write_text("overridden\n")
    assert render(tmp_path / "a", "variable_tail_coached.j2", cache, **_tail_context()) == "overridden\n"
    assert render(tmp_path / "b", "variable_tail_coached.j2", cache, **_tail_context()).startswith("### world")


def test_the_cache_folder_names_the_options_the_compiled_code_depends_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    before = template_cache_dir(tmp_path)
    monkeypatch.setitem(ENV_OPTIONS, "trim_blocks", False)
    assert template_cache_dir(tmp_path) != before


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
    assert render(tmp_path, "variable_tail_coached.j2", **_tail_context()).startswith("### world")
    assert compiled(tmp_path / "cache") == []


def test_a_cache_path_taken_by_a_file_costs_only_the_compile(tmp_path: Path):
    template_cache_dir(tmp_path / "cache").parent.mkdir(parents=True)
    template_cache_dir(tmp_path / "cache").write_text("not a folder")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("ok {{ v }}\n")
    assert render(tmp_path, v=2) == "ok 2\n"


def test_the_cache_folder_is_private_to_the_user(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("x\n")
    render(tmp_path)
    assert template_cache_dir(tmp_path / "cache").stat().st_mode & 0o077 == 0


def _tail_context() -> dict[str, object]:
    return {"loaded_sections": [], "loaded_tools": [], "memory_sections": [], "recall_sections": [], "session_facts": [], "world": "w",
            "notices": [], "today": "2026-12-04", "conversation": [], "request": "", "earlier_summary": "", "tools": [],
            "file_kinds": ()}


@pytest.mark.parametrize("tag", [b"", bytes(32), b"\xff" * 32])
def test_a_planted_compiled_template_is_never_loaded_and_is_compiled_again(tmp_path: Path, tag: bytes):
    """Issue 29: anyone who can write the cache (without the key) must not choose the code a render runs."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("safe {{ v }}\n")
    assert render(tmp_path, v=1) == "safe 1\n"
    [entry] = compiled(tmp_path / "cache")
    # a template compiled elsewhere (no key) written over the entry: what an attacker would plant
    import jinja2

    evil = jinja2.Environment(**ENV_OPTIONS)
    bucket = jinja2.bccache.Bucket(evil, "k", jinja2.bccache.FileSystemBytecodeCache().get_source_checksum(
        "safe {{ v }}\n"))
    bucket.code = compile(evil.compile("planted {{ v }}\n", raw=True), "t.j2", "exec")
    entry.write_bytes(tag + bucket.bytecode_to_string())
    assert render(tmp_path, v=1) == "safe 1\n"
    assert entry.read_bytes()[32:] != bucket.bytecode_to_string()  # rewritten, signed


@pytest.mark.parametrize("damage", ["truncate", "flip_tag", "flip_body", "unsigned"])
def test_a_damaged_cache_entry_is_refused_and_recompiled(tmp_path: Path, damage: str):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("ok {{ v }}\n")
    render(tmp_path, v=1)
    [entry] = compiled(tmp_path / "cache")
    blob = bytearray(entry.read_bytes())
    if damage == "truncate":
        blob = blob[:40]
    elif damage == "flip_tag":
        blob[0] ^= 1
    elif damage == "flip_body":
        blob[-1] ^= 1
    else:
        blob = blob[32:]
    entry.write_bytes(bytes(blob))
    assert render(tmp_path, v=3) == "ok 3\n"
    import hashlib
    import hmac

    key = (tmp_path / "cache" / "template-key").read_bytes()
    fresh = entry.read_bytes()
    assert hmac.compare_digest(fresh[:32], hmac.new(key, fresh[32:], hashlib.sha256).digest())


def test_the_signing_key_is_private_and_a_shared_key_is_not_trusted(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "t.j2").write_text("k {{ v }}\n")
    render(tmp_path, v=1)
    key = tmp_path / "cache" / "template-key"
    assert key.stat().st_mode & 0o777 == 0o600
    key.chmod(0o644)  # readable by others: it signs nothing, the cache is skipped
    from atomic_agent.prompt.signed_bytecode_cache import template_key

    assert template_key(tmp_path / "cache") is None
    assert render(tmp_path, v=2) == "k 2\n"
