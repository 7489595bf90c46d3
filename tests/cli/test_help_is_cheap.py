"""`atomic-agent --help` lists every plugin's commands without loading what only running a
command needs: no config classes or converters (cattrs), no hook record classes, no asyncio, no importlib.metadata, no HTTP
client, no SQLite, no Jinja, no rich or numpy — and it writes nothing (not even the state
dir)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.cli.run_cli import run_cli
from tests.fake_distribution import write_distribution

# the heavy modules a command may need but a help screen never does
NOT_FOR_HELP = ("cattrs", "asyncio", "importlib.metadata", "httpx", "sqlite3", "jinja2", "jsonschema",
                "pydantic", "sqlite_utils", "numpy", "rich", "pygments", "atomic_agent.runtime.boot_context",
                "atomic_agent.config.config_converter", "atomic_agent.config.app_config",
                "atomic_agent.config.config_file", "atomic_agent.hook_records", "atomic_agent.runtime.runtime",
                "atomic_agent.agent.agent_loop", "atomic_agent.sessions.session_store",
                "atomic_agent.turns.turn_lifecycle", "atomic_agent.prompt.build_prompt")

PROBE = """
import sys
from atomic_agent.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("MODULES=" + __import__("json").dumps(sorted(k for k, v in sys.modules.items() if v is not None)),
      file=sys.stderr)  # (an entry of None is an import kept out: unused_extras)
"""


def modules_loaded_by(args: list[str], env: dict[str, str] | None = None) -> tuple[set[str], str]:
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, **(env or {})})
    line = next(x for x in result.stderr.splitlines() if x.startswith("MODULES="))
    return set(json.loads(line[len("MODULES="):])), result.stdout


def test_help_does_not_import_what_only_commands_need(tmp_path: Path) -> None:
    loaded, out = modules_loaded_by(["--state-dir", str(tmp_path / "state"), "--help"])
    assert "run" in out and "serve" in out and "trace" in out  # every plugin's commands are listed
    heavy = sorted(m for m in loaded if m in NOT_FOR_HELP or m.split(".")[0] in NOT_FOR_HELP)
    assert heavy == []


def test_subcommand_help_is_cheap_too(tmp_path: Path) -> None:
    loaded, out = modules_loaded_by(["--state-dir", str(tmp_path), "task", "--help"])
    assert "create" in out
    # (typer coerces the root's --state-dir through pydantic once a subcommand is named, and
    # pydantic's plugin loader imports importlib.metadata: typer's cost, not a plugin's)
    assert not {"asyncio", "cattrs", "atomic_agent.runtime.boot_context", "httpx", "sqlite3"} & loaded


def test_help_writes_nothing(tmp_path: Path) -> None:
    state = tmp_path / "never-created"
    assert run_cli(["--state-dir", str(state), "--help"]).returncode == 0
    assert not state.exists()


def test_help_honours_plugins_disabled_and_env_allow_list(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"version": 1, "plugins": {"disabled": ["trace_cli"]}}))
    listed = run_cli(["--state-dir", str(tmp_path), "--help"]).stdout
    assert " trace " not in listed and " run " in listed
    (tmp_path / ".env").write_text("ATOMIC_AGENT_PLUGINS=chat_cli\n")  # .env chooses plugins as a boot reads it
    only_chat = run_cli(["--state-dir", str(tmp_path), "--help"])
    assert " run " in only_chat.stdout and " serve " not in only_chat.stdout


def test_help_lists_a_third_party_plugins_commands_and_survives_a_raising_one(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_distribution(site, "aa-help-ok", "1.2.3", {"aa_help_ok": (
        "from atomic_agent.api import hookimpl\n"
        "@hookimpl\n"
        "def register_commands(app):\n"
        "    def hello():\n"
        "        '''Say hello.'''\n"
        "    app.command('third-party-hello')(hello)\n")}, {"help_ok": "aa_help_ok"})
    write_distribution(site, "aa-help-bad", "0.1", {"aa_help_bad": (
        "from atomic_agent.api import hookimpl\n"
        "@hookimpl\n"
        "def register_commands(app):\n"
        "    raise RuntimeError('no commands today')\n")}, {"help_bad": "aa_help_bad"})
    env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    loaded, out = modules_loaded_by(["--state-dir", str(tmp_path / "state"), "--help"], env=env)
    assert "third-party-hello" in out and "plugins" in out
    assert "importlib.metadata" not in loaded


def test_a_command_after_a_help_looking_option_value_still_boots(tmp_path: Path) -> None:
    # `--` ends the options: "--help" after it is a value, and the command runs with config loaded
    result = run_cli(["--state-dir", str(tmp_path), "config", "get", "--", "--help"])
    assert "Traceback" not in result.stderr
    assert "did not boot" not in result.stderr
