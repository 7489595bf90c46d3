"""config.json keeps only what the user set: an older file, which held every default of
the release that wrote it, loses those defaults once (backup kept), so a default changed
later reaches its user; nothing the user chose is ever dropped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from atomic_agent.config.config_converter import strict_converter
from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_fields import int_field
from atomic_agent.config.config_file import load_config, read_raw_config, save_raw_config, set_key
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.config.written_defaults import drop_written_defaults
from atomic_agent.hook_records import ConfigBlock


def real_blocks() -> dict[str, ConfigBlock]:
    """The llama and memoryEmbeddings blocks as their plugins register them (with their former defaults)."""
    from atomic_agent.plugins.llama_server import register_config_blocks as llama_blocks
    from atomic_agent.plugins.memory_embeddings import register_config_blocks as embedding_blocks

    return {b.key: b for b in [*llama_blocks(), *embedding_blocks()]}


def full_dump_of_an_older_release(blocks: dict[str, ConfigBlock]) -> dict[str, Any]:
    """What a release before v3 wrote on any `config set`: every block, every default, with
    the defaults of that release (llama.threads 2, embedding threads 1, blend 0.5 / 0.5)."""
    from atomic_agent.config.app_config import CORE_BLOCKS

    body: dict[str, Any] = {"version": 2}
    for key, cls in {**CORE_BLOCKS, **{k: b.cls for k, b in blocks.items()}}.items():
        body[key] = strict_converter.unstructure(cls())
    body["llama"]["threads"] = 2
    body["llama"]["embeddings"]["threads"] = 1
    body["memoryEmbeddings"]["fts5Weight"] = 0.5
    body["memoryEmbeddings"]["vectorWeight"] = 0.5
    return body


def write(state: Path, body: Any) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    path = state / "config.json"
    path.write_text(json.dumps(body, indent=2) if not isinstance(body, str) else body)
    return path


def test_a_changed_default_reaches_a_user_with_an_older_file(tmp_path: Path, capsys):
    blocks = real_blocks()
    old = full_dump_of_an_older_release(blocks)
    old["llama"]["parallel"] = 4  # the one thing this user chose
    path = write(tmp_path, old)
    cfg = load_config(tmp_path, blocks, environ={})
    llama = cfg.block("llama")
    assert llama.threads == 0 and llama.embeddings.threads == 0  # today's default (auto), not the written 2 / 1
    assert (cfg.block("memoryEmbeddings").fts5_weight, cfg.block("memoryEmbeddings").vector_weight) == (0.6, 0.4)
    assert llama.parallel == 4
    assert json.loads(path.read_text()) == {"version": CONFIG_VERSION, "llama": {"parallel": 4}}
    err = capsys.readouterr().err
    assert "llama.threads was 2" in err and "config set llama.threads 2" in err
    assert "memoryEmbeddings.fts5Weight was 0.5" in err


def test_migration_keeps_user_values_and_blocks_it_cannot_judge_and_writes_one_backup(tmp_path: Path):
    blocks = real_blocks()
    old = full_dump_of_an_older_release(blocks)
    old["agent"]["maxSteps"] = 40
    old["llama"]["embeddings"]["ctxSize"] = 4096
    old["memoryEmbeddings"]["enabled"] = True
    old["telegram"] = {"enabled": False, "pollTimeoutS": 30}  # its plugin is not loaded: kept as written
    path = write(tmp_path, old)
    original = path.read_bytes()
    cfg = load_config(tmp_path, blocks, environ={})
    assert json.loads(path.read_text()) == {
        "version": CONFIG_VERSION, "agent": {"maxSteps": 40}, "llama": {"embeddings": {"ctxSize": 4096}},
        "memoryEmbeddings": {"enabled": True}, "telegram": {"enabled": False, "pollTimeoutS": 30}}
    assert cfg.agent.max_steps == 40 and cfg.block("llama").embeddings.ctx_size == 4096
    backup = tmp_path / "config.json.bak"
    assert backup.read_bytes() == original and (backup.stat().st_mode & 0o777) == 0o600
    write(tmp_path, {"version": 2, "agent": {"maxSteps": 41}})  # a second older file (restored by hand)
    load_config(tmp_path, blocks, environ={})
    assert backup.read_bytes() == original  # the first backup, the oldest original, is never overwritten
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "config.json.bak"]


def test_migration_runs_once_so_a_former_default_chosen_later_stays(tmp_path: Path):
    blocks = real_blocks()
    write(tmp_path, full_dump_of_an_older_release(blocks))
    load_config(tmp_path, blocks, environ={})
    path = tmp_path / "config.json"
    save_raw_config(path, set_key(read_raw_config(path), "llama.threads", 2), blocks)
    assert load_config(tmp_path, blocks, environ={}).block("llama").threads == 2
    assert json.loads(path.read_text())["llama"] == {"threads": 2}


def test_a_set_on_a_file_not_yet_migrated_keeps_what_it_sets(tmp_path: Path):
    blocks = real_blocks()
    path = write(tmp_path, full_dump_of_an_older_release(blocks))
    raw = read_raw_config(path)
    set_key(raw, "llama.threads", 0)  # today's default, chosen now: pinned, not dropped as a written one
    set_key(raw, "agent.maxSteps", 30)
    save_raw_config(path, raw, blocks)
    on_disk = json.loads(path.read_text())
    assert on_disk == {"version": CONFIG_VERSION, "agent": {"maxSteps": 30}, "llama": {"threads": 0}}
    assert (tmp_path / "config.json.bak").exists()


def test_a_file_this_project_never_wrote_whole_keeps_every_value(tmp_path: Path):
    # v1 is the predecessor's format, and a hand-written file without "version" reads as v1:
    # nothing in it was filled in by this project, so a value equal to a default is still a choice
    path = write(tmp_path, {"agent": {"approvalRequired": True, "maxSteps": 24}, "llama": {"threads": 2}})
    load_config(tmp_path, real_blocks(), environ={})
    assert json.loads(path.read_text()) == {"version": CONFIG_VERSION, "agent": {"maxSteps": 24, "approvalLevel": 1},
                                            "llama": {"threads": 2}}


@pytest.mark.parametrize("body", [
    '{"version": 2, "agent": {"maxSteps": 24,}}',          # not JSON
    {"version": 2, "agent": {"maxSteps": 24, "approvalLevel": 9}},  # a value out of range
    {"version": 2, "agent": {"maxStep": 24}},              # a misspelled key
])
def test_a_malformed_older_file_is_a_clear_error_and_left_untouched(tmp_path: Path, body: Any):
    path = write(tmp_path, body)
    before = path.read_bytes()
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert str(path) in str(err.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]  # no backup, no temp file


@attrs.frozen
class Doubling:
    size: int = int_field(2, 1, 1000)


def _double(raw: dict[str, Any]) -> dict[str, Any]:
    # breaks the ConfigBlock.migrate contract (not idempotent): the migration must notice, not corrupt
    return {**raw, "size": raw["size"] * 2} if "size" in raw else raw


def test_a_drop_that_would_change_another_value_is_refused(tmp_path: Path, capsys):
    blocks = {"doubling": ConfigBlock(key="doubling", cls=Doubling, migrate=_double)}
    path = write(tmp_path, {"version": 2, "doubling": {"size": 3}, "agent": {"maxSteps": 24}})
    cfg = load_config(tmp_path, blocks, environ={})
    assert cfg.block("doubling").size == 6  # as the file loaded before this build
    assert json.loads(path.read_text())["doubling"] == {"size": 3}
    assert "kept every written value" in capsys.readouterr().err


def test_values_are_compared_as_json_so_true_is_not_a_default_of_one():
    @attrs.frozen
    class Knobs:
        level: int = int_field(1, 0, 5)
        depth: int = int_field(0, 0, 5)

    raw = {"version": 2, "knobs": {"level": True, "depth": False}}
    kept, dropped = drop_written_defaults(raw, {"knobs": ConfigBlock(key="knobs", cls=Knobs)})
    assert kept["knobs"] == {"level": True, "depth": False} and dropped.count == 0
