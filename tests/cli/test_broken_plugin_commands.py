"""A plugin whose `register_commands` raises (an installed distribution, found through its
entry point like any pip-installed plugin) is reported by `atomic-agent plugins` with its
name and error; `--help` and every other command keep working, and the command it added
before raising is taken back out."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.run_cli import run_cli
from tests.fake_distribution import write_distribution

BROKEN = '''
from atomic_agent.api import hookimpl

@hookimpl
def register_commands(app):
    app.command("half-added")(lambda: None)
    raise RuntimeError("commands exploded on purpose")
'''

HEALTHY = '''
from atomic_agent.api import hookimpl

@hookimpl
def register_commands(app):
    def hello():
        """Say hello."""
        print("hello from the healthy plugin")
    app.command("healthy-hello")(hello)
'''


@pytest.fixture
def plugin_env(tmp_path: Path) -> dict[str, str]:
    site = tmp_path / "site"
    write_distribution(site, "aa-commands-broken", "0.0.2", {"aa_commands_broken": BROKEN},
                       {"commands_broken": "aa_commands_broken"})
    write_distribution(site, "aa-commands-healthy", "0.0.3", {"aa_commands_healthy": HEALTHY},
                       {"commands_healthy": "aa_commands_healthy"})
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}


def test_raising_register_commands_is_reported_by_plugins_with_name_and_error(tmp_path: Path, plugin_env) -> None:
    result = run_cli(["--state-dir", str(tmp_path / "state"), "plugins", "--json"], env=plugin_env)
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["commands_broken"]["status"] == "failed"
    assert "register_commands" in rows["commands_broken"]["error"]
    assert "commands exploded on purpose" in rows["commands_broken"]["error"]
    assert rows["commands_healthy"]["status"] == "loaded"
    assert "commands_broken" in result.stderr


def test_help_and_other_commands_survive_a_raising_register_commands(tmp_path: Path, plugin_env) -> None:
    state = str(tmp_path / "state")
    helped = run_cli(["--state-dir", state, "--help"], env=plugin_env)
    assert helped.returncode == 0, helped.stderr
    assert "healthy-hello" in helped.stdout and "plugins" in helped.stdout
    assert "half-added" not in helped.stdout  # the failing plugin's partial work is rolled back
    said = run_cli(["--state-dir", state, "healthy-hello"], env=plugin_env)
    assert said.returncode == 0 and "hello from the healthy plugin" in said.stdout
