"""CONTRIBUTING's "Write a plugin in 10 minutes", done as written: the example tool copied into
an external project with the pyproject.toml the walk-through shows, installed with pip, found
by `atomic-agent plugins` and `prompt show`, and the walk-through's own test file run with
pytest from inside that project. The code blocks are read from CONTRIBUTING.md itself, so the
document and this test cannot drift apart."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _walkthrough_blocks() -> dict[str, str]:
    text = (REPO / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Write a plugin in 10 minutes"):]
    blocks = re.findall(r"```(toml|python)\n(.*?)```", section, flags=re.S)
    found = {lang: "\n".join(line[3:] if line.startswith("   ") else line for line in body.splitlines())
             for lang, body in blocks}
    assert set(found) == {"toml", "python"}, "the walk-through lost its pyproject.toml or its test"
    return found


def test_the_contributing_walkthrough_works_as_written(tmp_path: Path) -> None:
    blocks = _walkthrough_blocks()
    project = tmp_path / "word-tools"
    (project / "word_tools").mkdir(parents=True)  # step 1
    shutil.copy(REPO / "contrib" / "example_tool" / "__init__.py", project / "word_tools" / "__init__.py")
    (project / "pyproject.toml").write_text(blocks["toml"])  # step 2
    site = tmp_path / "site"  # step 3, into a folder of its own instead of the shared test venv
    installed = subprocess.run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                                "--no-build-isolation", "--target", str(site), str(project)],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    env = {**os.environ, "PYTHONPATH": str(site), "ATOMIC_AGENT_STATE_DIR": str(tmp_path / "state")}
    plugins = subprocess.run([str(BIN / "atomic-agent"), "plugins"], capture_output=True, text=True, env=env,
                             timeout=120)
    row = next(line for line in plugins.stdout.splitlines() if line.startswith("word_tools"))
    assert "word-tools 0.1.0" in row and "register_tools" in row and row.rstrip().endswith("loaded"), row
    shown = subprocess.run([str(BIN / "atomic-agent"), "prompt", "show"], capture_output=True, text=True, env=env,
                           timeout=120)
    assert shown.returncode == 0 and "example.word_count" in shown.stdout, shown.stderr
    (project / "tests").mkdir()  # step 5
    (project / "tests" / "test_word_tools.py").write_text(blocks["python"])
    tested = subprocess.run([str(BIN / "pytest"), "-q", "-p", "no:cacheprovider"], cwd=project, capture_output=True,
                            text=True, env=env, timeout=300)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "2 passed" in tested.stdout, tested.stdout  # the async test ran: not skipped for want of a mode
