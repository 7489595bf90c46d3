"""`atomic-agent config set|unset|show` through the real console script: the file holds
only what was set, unset returns a key to the default, show says where each value is from."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.config.migrate_config import CONFIG_VERSION
from tests.cli.run_cli import run_cli


def config(state: Path, *args: str, env: dict[str, str] | None = None):
    return run_cli(["--state-dir", str(state), "config", *args], env=env)


def on_disk(state: Path) -> dict:
    return json.loads((state / "config.json").read_text())


def test_set_writes_only_that_key_and_keeps_earlier_ones(tmp_path: Path):
    assert config(tmp_path, "set", "agent.maxSteps", "12").returncode == 0
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION, "agent": {"maxSteps": 12}}
    done = config(tmp_path, "set", "llama.threads", "3")
    assert done.returncode == 0, done.stderr
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION, "agent": {"maxSteps": 12}, "llama": {"threads": 3}}


def test_unset_returns_a_key_to_the_default_and_refuses_unknown_keys(tmp_path: Path):
    config(tmp_path, "set", "agent.maxSteps", "12")
    config(tmp_path, "set", "agent.toolTimeoutS", "60")
    done = config(tmp_path, "unset", "agent.maxSteps")
    assert done.returncode == 0 and "default: 24" in done.stdout
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION, "agent": {"toolTimeoutS": 60}}
    config(tmp_path, "unset", "agent.toolTimeoutS")
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION}  # the emptied block goes too
    again = config(tmp_path, "unset", "agent.maxSteps")
    assert again.returncode == 0 and "already follows the default" in again.stdout
    typo = config(tmp_path, "unset", "agent.maxStep")
    assert typo.returncode != 0 and "no such key" in typo.stderr and "Traceback" not in typo.stderr
    assert config(tmp_path, "unset", "version").returncode != 0
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION}


def test_show_marks_defaults_user_values_and_env_overrides(tmp_path: Path):
    config(tmp_path, "set", "llama.parallel", "4")
    shown = config(tmp_path, "show", "--json", env={"ATOMIC_AGENT_MAX_STEPS": "7"})
    assert shown.returncode == 0, shown.stderr
    rows = {row["key"]: row for row in json.loads(shown.stdout)}
    assert rows["llama.parallel"] == {"key": "llama.parallel", "value": 4, "source": "user"}
    assert rows["llama.threads"] == {"key": "llama.threads", "value": 0, "source": "default"}
    assert rows["llama.embeddings.threads"]["source"] == "default"  # nested records are walked
    assert rows["agent.maxSteps"] == {"key": "agent.maxSteps", "value": 7, "source": "env"}
    table = config(tmp_path, "show").stdout.splitlines()
    assert table[0].split() == ["key", "value", "source"]
    assert next(line for line in table if line.startswith("llama.parallel ")).split() == ["llama.parallel", "4", "user"]
    assert next(line for line in table if line.startswith("llama.threads ")).split() == ["llama.threads", "0",
                                                                                         "default"]


def test_an_older_full_file_is_migrated_on_first_use_and_show_says_so(tmp_path: Path):
    # what `config set agent.maxSteps 30` wrote before v3: every block in full, llama.threads 2 among them
    shown = json.loads(config(tmp_path / "fresh", "show", "--json").stdout)
    full: dict = {"version": 2}
    for row in shown:
        block, *rest = row["key"].split(".")
        node = full.setdefault(block, {})
        for part in rest[:-1]:
            node = node.setdefault(part, {})
        node[rest[-1]] = row["value"]
    full["llama"]["threads"] = 2
    full["agent"]["maxSteps"] = 30
    (tmp_path / "config.json").write_text(json.dumps(full, indent=2))
    result = config(tmp_path, "show", "--json")
    assert result.returncode == 0, result.stderr
    assert "llama.threads was 2" in result.stderr and "config.json.bak" in result.stderr
    rows = {row["key"]: row for row in json.loads(result.stdout)}
    assert rows["llama.threads"] == {"key": "llama.threads", "value": 0, "source": "default"}
    assert rows["agent.maxSteps"]["source"] == "user"
    assert on_disk(tmp_path) == {"version": CONFIG_VERSION, "agent": {"maxSteps": 30}}
    assert json.loads((tmp_path / "config.json.bak").read_text()) == full
