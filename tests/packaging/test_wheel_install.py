"""The built wheel works in a fresh venv, and real pip-installed plugins beside it behave:
a broken one is listed as failed while everything else keeps working, and the
CONTRIBUTING walkthrough's third-party plugin loads."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def sh(*args: str | Path, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{args} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


def write_package(root: Path, dist: str, module: str, source: str, entry: str) -> Path:
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text(source)
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{dist}"
        version = "0.1.0"

        [project.entry-points.atomic_agent]
        {entry} = "{module}"
        """))
    return root


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".venv", ".ci-venv", ".git", "build", "dist", "*.egg-info",
                                                             "__pycache__"))
    sh(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", work / "dist", src)
    wheels = list((work / "dist").glob("atomic_agent-*.whl"))
    assert len(wheels) == 1
    venv = work / "venv"
    sh(sys.executable, "-m", "venv", venv)
    sh(venv / "bin" / "pip", "install", "-q", "--disable-pip-version-check", wheels[0])
    return venv


def test_wheel_ships_templates_and_grammars(wheel_venv: Path):
    out = sh(wheel_venv / "bin" / "python", "-c",
             "import importlib.resources as r;"
             "print(r.files('atomic_agent.templates').joinpath('stable_prefix_coached.j2').is_file(),"
             " r.files('atomic_agent.grammars').joinpath('tool-call.gbnf').is_file(),"
             " r.files('atomic_agent.plugins.memory_reflection').joinpath('templates/reflection.j2').is_file(),"
             " r.files('atomic_agent.plugins.memory_reflection').joinpath('grammars/reflection.gbnf').is_file(),"
             " r.files('atomic_agent.plugins.sidecar').joinpath('protocol/sidecar-protocol.v1.schema.json').is_file(),"
             " r.files('atomic_agent.plugins.memory_reflection').joinpath('templates/reflection_typed.j2').is_file())")
    assert out.stdout.split() == ["True"] * 6


def test_wheel_cli_runs_and_lists_builtin_plugins_loaded(wheel_venv: Path, tmp_path: Path):
    cli = wheel_venv / "bin" / "atomic-agent"
    assert sh(cli, "--version").stdout.startswith("atomic-agent ")
    rows = json.loads(sh(cli, "--state-dir", tmp_path, "plugins", "--json").stdout)
    assert rows and all(r["status"] == "loaded" for r in rows), rows
    shown = sh(cli, "--state-dir", tmp_path, "prompt", "show", "--message", "hi", "--no-grammar").stdout
    assert "### tools" in shown and "user: hi" in shown


def test_pip_installed_broken_plugin_is_isolated_and_third_party_plugin_loads(wheel_venv: Path, tmp_path: Path):
    pip = wheel_venv / "bin" / "pip"
    broken = write_package(tmp_path / "broken", "aa-broken", "aa_broken", "raise ImportError('kaput on import')\n",
                           "broken_plugin")
    example_src = (REPO / "contrib" / "example_tool" / "__init__.py").read_text()
    words = write_package(tmp_path / "words", "word-tools", "word_tools", example_src, "word_tools")
    sh(pip, "install", "-q", "--disable-pip-version-check", broken)
    sh(pip, "install", "-q", "--disable-pip-version-check", "-e", words)
    cli = wheel_venv / "bin" / "atomic-agent"
    state = tmp_path / "state"
    result = sh(cli, "--state-dir", state, "plugins", "--json")
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert rows["broken_plugin"]["status"] == "failed" and "kaput on import" in rows["broken_plugin"]["error"]
    assert rows["broken_plugin"]["distribution"] == "aa-broken"
    assert rows["word_tools"]["status"] == "loaded" and rows["word_tools"]["hooks"] == ["register_tools"]
    assert all(r["status"] == "loaded" for n, r in rows.items() if n != "broken_plugin")
    assert "example.word_count" in sh(cli, "--state-dir", state, "prompt", "show", "--no-grammar").stdout
    assert sh(cli, "--state-dir", state, "--help").returncode == 0
