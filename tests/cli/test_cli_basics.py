"""The CLI a user sees: version, help, plugins, config, and clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

from atomic_agent import __version__
from tests.cli.run_cli import run_cli
from tests.fake_distribution import write_distribution

BUILTIN_PLUGINS = {"core", "llama_server"}


def test_version_prints_the_package_version():
    result = run_cli(["--version"])
    assert result.returncode == 0 and result.stdout.strip() == f"atomic-agent {__version__}"


def test_help_lists_core_and_plugin_commands(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "--help"])
    assert result.returncode == 0
    for command in ("plugins", "config"):
        assert command in result.stdout


def test_plugins_json_lists_every_builtin_plugin_as_loaded(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "plugins", "--json"])
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert BUILTIN_PLUGINS <= set(rows)
    for name in BUILTIN_PLUGINS:
        assert rows[name]["status"] == "loaded", rows[name]
        assert rows[name]["distribution"] == "atomic-agent"


def test_broken_installed_plugin_is_listed_failed_and_cli_keeps_working(tmp_path: Path):
    site = tmp_path / "site"
    write_distribution(site, "aa-broken-plugin", "0.0.1",
                       {"aa_broken_plugin": "import does_not_exist_anywhere\n"},
                       {"broken_thing": "aa_broken_plugin"})
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    state = tmp_path / "state"
    result = run_cli(["--state-dir", str(state), "plugins", "--json"], env=env)
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    broken = rows["broken_thing"]
    assert broken["status"] == "failed"
    assert broken["distribution"] == "aa-broken-plugin" and broken["version"] == "0.0.1"
    assert "does_not_exist_anywhere" in broken["error"]
    assert all(rows[name]["status"] == "loaded" for name in BUILTIN_PLUGINS)
    assert "broken_thing" in result.stderr  # one warning line naming it
    for args in (["--help"], ["config", "show"], ["config", "path"]):
        again = run_cli(["--state-dir", str(state), *args], env=env)
        assert again.returncode == 0, (args, again.stderr)


def test_disabled_plugin_is_listed_disabled(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 2, "plugins": {"disabled": ["llama_server"]}}))
    result = run_cli(["--state-dir", str(tmp_path), "plugins", "--json"])
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["llama_server"]["status"] == "disabled"


def test_env_plugins_empty_loads_none(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "plugins", "--json"], env={"ATOMIC_AGENT_PLUGINS": ""})
    rows = {row["name"]: row["status"] for row in json.loads(result.stdout)}
    assert rows["core"] == "loaded" and rows["llama_server"] == "disabled"


def test_config_set_get_round_trip(tmp_path: Path):
    assert run_cli(["--state-dir", str(tmp_path), "config", "set", "agent.maxSteps", "12"]).returncode == 0
    got = run_cli(["--state-dir", str(tmp_path), "config", "get", "agent.maxSteps"])
    assert got.stdout.strip() == "12"
    assert json.loads((tmp_path / "config.json").read_text())["agent"]["maxSteps"] == 12


def test_config_set_invalid_value_is_refused_and_file_unchanged(tmp_path: Path):
    run_cli(["--state-dir", str(tmp_path), "config", "show"])
    before = (tmp_path / "config.json").read_bytes()
    result = run_cli(["--state-dir", str(tmp_path), "config", "set", "agent.approvalLevel", "7"])
    assert result.returncode != 0 and "approvalLevel" in result.stderr and "Traceback" not in result.stderr
    assert (tmp_path / "config.json").read_bytes() == before


def test_config_path_prints_the_file(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "config", "path"])
    assert result.stdout.strip() == str(tmp_path / "config.json")


def test_malformed_config_is_a_one_paragraph_error_not_a_traceback(tmp_path: Path):
    (tmp_path / "config.json").write_text("{not json")
    result = run_cli(["--state-dir", str(tmp_path), "config", "show"])
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert str(tmp_path / "config.json") in result.stderr and "not valid JSON" in result.stderr
    assert run_cli(["--state-dir", str(tmp_path), "--help"]).returncode == 0


def test_unusable_state_dir_is_a_clear_error(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")  # a regular file where a directory should be (fails for root too)
    result = run_cli(["--state-dir", str(blocker / "state"), "config", "show"])
    assert result.returncode == 2 and "state directory" in result.stderr and "Traceback" not in result.stderr


def test_state_dir_is_created_0700(tmp_path: Path):
    state = tmp_path / "new-state"
    assert run_cli(["--state-dir", str(state), "config", "path"]).returncode == 0
    assert (state.stat().st_mode & 0o777) == 0o700


def test_state_dir_from_env(tmp_path: Path):
    result = run_cli(["config", "path"], env={"ATOMIC_AGENT_STATE_DIR": str(tmp_path / "s")})
    assert result.stdout.strip() == str(tmp_path / "s" / "config.json")
