"""`llama status` from a state dir that did not start the server still probes the configured
address: a server started from another state dir (or by hand) is reported running, with a
note that this state dir cannot stop it (issue 35: it used to say "unreachable")."""

from __future__ import annotations

import json
import os
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}


def test_status_probes_the_configured_port_without_a_pid_file(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    with FakeLlamaServer() as fake:
        (state / "config.json").write_text(json.dumps({"llama": {"host": "127.0.0.1", "port": fake.port}}))
        shown = json.loads(run_cli(["--state-dir", str(state), "llama", "status", "--json"], env=_env()).stdout)
        assert (shown["mode"], shown["running"], shown["pid"], shown["health"]) == ("managed", True, None, "ok")
        assert shown["totalSlots"] == 2
        text = run_cli(["--state-dir", str(state), "llama", "status"], env=_env()).stdout
        assert "llama-server: running (managed)" in text
        assert "was not started from this state dir" in text
    gone = json.loads(run_cli(["--state-dir", str(state), "llama", "status", "--json"], env=_env()).stdout)
    assert (gone["running"], gone["health"], gone["detail"]) == (False, "unreachable", "not started")
