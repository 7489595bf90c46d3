"""`atomic-agent prompt show` says which prompt style is in use and why, in text and JSON."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.cli.run_cli import run_cli


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def test_prompt_show_names_the_style_in_use_and_why(tmp_path: Path) -> None:
    env = {"ATOMIC_AGENT_STATE_DIR": str(tmp_path / "state"), "ATOMIC_AGENT_LLAMA_URL": closed_port_url()}
    shown = run_cli(["prompt", "show", "--message", "hi", "--no-grammar"], env=env)
    assert shown.returncode == 0, shown.stderr
    assert "style: full (auto: the model is unknown (no server answered))" in shown.stdout
    coached = run_cli(["prompt", "show", "--message", "hi", "--json"],
                      env={**env, "ATOMIC_AGENT_PROMPT_STYLE": "coached"})
    body = json.loads(coached.stdout)
    assert (body["style"], body["styleReason"]) == ("coached", "set by prompt.style")
    assert "A turn has two steps" in body["prompt"]
