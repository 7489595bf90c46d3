"""`atomic-agent run` as a real process: an ask_user question is asked on the terminal with
its options, answered by typing an option id, committed to the durable record as the
terminal's answer, and the turn resumes from it; end of input withdraws the question."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli
from tests.cli.test_run_under_faults import env_for, quiet_state

ASK = json.dumps([{"tool": "ask_user", "args": {
    "prompt": "Delete the 3 old backups?", "reason": "irreversible_commitment", "evidence": "they are the only copies",
    "options": [{"id": "yes", "label": "Delete them"}, {"id": "no", "label": "Keep them"}]}}])
REPLY = json.dumps([{"tool": "reply", "args": {"text": "kept them"}}])


def _records(state: Path) -> list[dict]:
    listed = run_cli(["--state-dir", str(state), "approvals", "list", "--all", "--json"])
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


def test_a_question_on_the_terminal_takes_an_option_id_and_the_turn_resumes_from_it(tmp_path: Path) -> None:
    state = quiet_state(tmp_path)
    with FakeLlamaServer(script=[ASK, REPLY]) as fake:
        result = run_cli(["--state-dir", str(state), "run", "tidy the backups"], env=env_for(fake),
                         input_text="maybe\nno\n")
        prompts = [b["prompt"] for b in fake.completion_bodies]
    assert result.returncode == 0, result.stderr
    assert "Delete the 3 old backups?" in result.stderr and "[2] no: Keep them" in result.stderr
    assert "takes no free text" in result.stderr  # "maybe" was refused, "no" was taken
    assert "kept them" in result.stdout
    assert "the person chose 'no' (Keep them)" in prompts[-1]
    (record,) = _records(state)
    assert (record["kind"], record["state"], record["decision"], record["surface"]) == (
        "question", "answered", "no", "terminal")


def test_end_of_input_withdraws_the_question_and_the_model_is_told(tmp_path: Path) -> None:
    state = quiet_state(tmp_path)
    with FakeLlamaServer(script=[ASK, REPLY]) as fake:
        result = run_cli(["--state-dir", str(state), "run", "tidy the backups"], env=env_for(fake), input_text="")
        prompts = [b["prompt"] for b in fake.completion_bodies]
    assert result.returncode == 0, result.stderr
    assert "the question is withdrawn" in result.stderr
    assert "the question was cancelled (no answer at the terminal (end of input))" in prompts[-1]
    (record,) = _records(state)
    assert record["state"] == "cancelled"
