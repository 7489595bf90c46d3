"""One turn on the real llama-server (SmolLM2 starter model) that calls skill.view: forced
with `--tool-choice` (the grammar then admits only that tool; the model still writes the
name), the skill's body must reach `### loaded-skills` of the next step's prompt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.run_cli import run_cli

pytestmark = pytest.mark.llama_server


def test_a_forced_skill_view_loads_the_skill_on_the_real_server(llama_server, tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    (work / "app.log").write_text("ERROR disk full\n")
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "7",
           "ATOMIC_AGENT_MEMORY_REFLECTION": "0"}
    result = run_cli(["--state-dir", str(state), "run", "--cwd", str(work), "--json", "--tool-choice", "skill.view",
                      "use the log-triage skill on app.log"], env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in result.stdout.splitlines()]
    views = [e for e in events if e["type"] == "tool_call_result" and e["tool"] == "skill.view"]
    assert views, result.stdout[-2000:]
    loaded = [v for v in views if v["status"] == "ok"]
    if loaded:  # the model picked an installed skill: it is loaded for the session
        session = result.stderr.split("session: ", 1)[1].split()[0]
        assert (state / "skill-sessions" / f"{session}.json").is_file()
    else:  # a name the model made up: a clear not-found the model can act on
        assert "no enabled skill named" in views[0].get("summary", "") or views[0]["status"] == "error"
