"""config.json: defaults, migrations, newer files, unknown blocks, malformed files, env."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import attrs
import pytest

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_fields import int_field, value_field
from atomic_agent.config.config_file import load_config, read_raw_config, save_raw_config
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.hook_records import ConfigBlock


def write(state: Path, data: object) -> Path:
    state.mkdir(parents=True, exist_ok=True)
    path = state / "config.json"
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


@attrs.frozen
class WeatherConfig:
    city: str = value_field("Oslo")
    days: int = int_field(3, 1, 14)


WEATHER = {"weather": ConfigBlock(key="weather", cls=WeatherConfig, plugin="weather")}


def test_missing_file_is_created_holding_only_its_version_and_mode_0600(tmp_path: Path):
    cfg = load_config(tmp_path, {}, environ={})
    assert cfg.agent.max_parallel_tool_calls == 8
    path = tmp_path / "config.json"
    assert json.loads(path.read_text()) == {"version": CONFIG_VERSION}  # defaults live in the code, not the file
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_older_file_migrates_forward_keeping_user_values(tmp_path: Path, capsys):
    path = write(tmp_path, {"version": 1, "agent": {"approvalRequired": False, "maxSteps": 7},
                            "localModels": {"url": "http://127.0.0.1:9999"}})
    cfg = load_config(tmp_path, {}, environ={})
    assert cfg.agent.approval_level == 5
    assert cfg.agent.max_steps == 7
    on_disk = json.loads(path.read_text())
    assert on_disk["version"] == CONFIG_VERSION
    assert on_disk["agent"] == {"maxSteps": 7, "approvalLevel": 5}  # what the user wrote, in v3 words
    assert on_disk["llama"] == {"url": "http://127.0.0.1:9999"}  # unknown (plugin) block kept
    assert f"migrated config v1 -> v{CONFIG_VERSION}" in capsys.readouterr().err


def test_approval_required_true_or_absent_migrates_to_level_1(tmp_path: Path):
    write(tmp_path / "a", {"version": 1, "agent": {"approvalRequired": True}})
    write(tmp_path / "b", {"version": 1})
    assert load_config(tmp_path / "a", {}, environ={}).agent.approval_level == 1
    assert load_config(tmp_path / "b", {}, environ={}).agent.approval_level == 1


def test_migration_runs_once_then_is_a_no_op(tmp_path: Path, capsys):
    write(tmp_path, {"version": 1})
    load_config(tmp_path, {}, environ={})
    capsys.readouterr()
    before = (tmp_path / "config.json").read_bytes()
    load_config(tmp_path, {}, environ={})
    assert (tmp_path / "config.json").read_bytes() == before
    assert "migrated" not in capsys.readouterr().err


def test_newer_file_is_read_with_running_schema_and_never_rewritten(tmp_path: Path):
    newer = {"version": CONFIG_VERSION + 5, "agent": {"maxSteps": 9, "aFutureKnob": True}, "future": {"x": 1}}
    path = write(tmp_path, newer)
    before = path.read_bytes()
    cfg = load_config(tmp_path, {}, environ={})
    assert cfg.agent.max_steps == 9
    assert cfg.version == CONFIG_VERSION + 5
    assert path.read_bytes() == before


def test_save_never_lowers_a_newer_version(tmp_path: Path):
    path = write(tmp_path, {"version": CONFIG_VERSION + 1, "agent": {"maxSteps": 9}})
    raw = read_raw_config(path)
    raw["agent"]["maxSteps"] = 10
    save_raw_config(path, raw, {})
    assert json.loads(path.read_text())["version"] == CONFIG_VERSION + 1


def test_unknown_blocks_survive_a_round_trip(tmp_path: Path):
    path = write(tmp_path, {"version": CONFIG_VERSION, "telegram": {"token": "x", "nested": [1, 2]}})
    raw = read_raw_config(path)
    raw.setdefault("agent", {})["maxSteps"] = 3
    save_raw_config(path, raw, {})
    assert json.loads(path.read_text())["telegram"] == {"token": "x", "nested": [1, 2]}


def test_plugin_block_gets_defaults_and_validation(tmp_path: Path):
    write(tmp_path, {"version": CONFIG_VERSION, "weather": {"days": 5}})
    cfg = load_config(tmp_path, WEATHER, environ={})
    assert cfg.block("weather") == WeatherConfig(city="Oslo", days=5)
    write(tmp_path, {"version": CONFIG_VERSION, "weather": {"days": 99}})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, WEATHER, environ={})
    assert "weather.days" in str(err.value) and "1..14" in str(err.value)


def test_malformed_json_names_file_line_and_column(tmp_path: Path):
    write(tmp_path, '{"version": 2,\n  "agent": {"maxSteps": 3,,}}')
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    message = str(err.value)
    assert str(tmp_path / "config.json") in message and "line 2" in message and "not valid JSON" in message


def test_invalid_value_names_location_and_what_is_allowed(tmp_path: Path):
    write(tmp_path, {"version": CONFIG_VERSION, "agent": {"approvalLevel": 9}})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert "agent.approvalLevel" in str(err.value) and "1..5" in str(err.value)


def test_misspelled_key_is_rejected_with_allowed_keys(tmp_path: Path):
    write(tmp_path, {"version": CONFIG_VERSION, "agent": {"maxParalelToolCalls": 3}})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert "maxParalelToolCalls" in str(err.value) and "maxParallelToolCalls" in str(err.value)


def test_a_bad_file_is_left_untouched(tmp_path: Path):
    path = write(tmp_path, '{"version": 1, "agent": [}')
    before = path.read_bytes()
    with pytest.raises(ConfigError):
        load_config(tmp_path, {}, environ={})
    assert path.read_bytes() == before


def test_env_overrides_operational_knobs_without_writing(tmp_path: Path):
    env = {"ATOMIC_AGENT_MAX_PARALLEL_TOOL_CALLS": "99", "ATOMIC_AGENT_TRACING": "off"}
    cfg = load_config(tmp_path, {}, environ=env)
    assert cfg.agent.max_parallel_tool_calls == 16  # clamped into [1, 16]
    assert cfg.tracing.enabled is False
    assert "agent" not in json.loads((tmp_path / "config.json").read_text())


def test_env_override_with_garbage_is_a_clear_error(tmp_path: Path):
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={"ATOMIC_AGENT_MAX_STEPS": "lots"})
    assert "ATOMIC_AGENT_MAX_STEPS" in str(err.value)


def test_writes_are_atomic_no_temp_files_left(tmp_path: Path):
    load_config(tmp_path, {}, environ={})
    assert sorted(os.listdir(tmp_path)) == ["config.json"]


def test_a_valid_file_loads_without_the_detailed_converter_and_a_bad_one_still_names_the_field(tmp_path: Path):
    from atomic_agent.config import config_converter

    config_converter._detailed.cache_clear()
    write(tmp_path, {"version": CONFIG_VERSION, "agent": {"maxSteps": 30}, "weather": {"days": 5}})
    config = load_config(tmp_path, WEATHER, environ={})
    assert config.agent.max_steps == 30 and config.blocks["weather"].days == 5
    assert config_converter._detailed.cache_info().currsize == 0  # the fast path built everything
    write(tmp_path / "bad", {"version": CONFIG_VERSION, "weather": {"days": "five"}})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "bad", WEATHER, environ={})
    assert "weather.days" in str(err.value) and "integer" in str(err.value)


def test_prompt_style_defaults_to_auto_and_takes_each_allowed_value(tmp_path: Path):
    assert load_config(tmp_path / "fresh", {}, environ={}).prompt.style == "auto"
    assert "prompt" not in json.loads((tmp_path / "fresh" / "config.json").read_text())  # a default, not a choice
    for style in ("coached", "full"):
        write(tmp_path / style, {"version": CONFIG_VERSION, "prompt": {"style": style}})
        assert load_config(tmp_path / style, {}, environ={}).prompt.style == style
    assert load_config(tmp_path / "fresh", {}, environ={"ATOMIC_AGENT_PROMPT_STYLE": "coached"}).prompt.style == "coached"


def test_an_unknown_prompt_style_names_the_allowed_values(tmp_path: Path):
    write(tmp_path, {"version": CONFIG_VERSION, "prompt": {"style": "verbose"}})
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert "prompt.style" in str(err.value) and "auto, coached, full" in str(err.value) and "'verbose'" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path / "env", {}, environ={"ATOMIC_AGENT_PROMPT_STYLE": "big"})
    assert "ATOMIC_AGENT_PROMPT_STYLE" in str(err.value) and "auto, coached, full" in str(err.value)


def test_unset_key_removes_a_leaf_and_only_the_objects_it_empties():
    from atomic_agent.config.config_file import unset_key

    raw = {"version": CONFIG_VERSION, "llama": {"parallel": 4, "embeddings": {"threads": 3}}}
    assert unset_key(raw, "llama.embeddings.threads") is True
    assert raw == {"version": CONFIG_VERSION, "llama": {"parallel": 4}}
    assert unset_key(raw, "llama.embeddings.threads") is False
    assert unset_key(raw, "llama") is True and raw == {"version": CONFIG_VERSION}
    with pytest.raises(ConfigError):
        unset_key(raw, "version")
