"""`atomic-agent run` in worktree mode (the real console script, every installed plugin, a
scripted model server): after the turn that wrote a file, stderr shows the diffstat and the
commands to see, apply and discard it; stdout is the reply alone; the workspace is untouched
until `sandbox apply`."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli
from tests.plugins.sandbox.test_session_worktree import make_repo


def test_run_in_worktree_mode_prints_the_diffstat_and_the_commands_after_the_reply(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({
        "agent": {"approvalLevel": 2}, "sandbox": {"worktree": True},
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}))
    script = [json.dumps([{"tool": "os.fs.write", "args": {"path": "new.txt", "content": "one\ntwo\n"}}]),
              json.dumps([{"tool": "reply", "args": {"text": "Wrote new.txt."}}])]
    env = {"ATOMIC_AGENT_STATE_DIR": ""}
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        done = run_cli(["--state-dir", str(state), "run", "--cwd", str(ws), "write new.txt"],
                       env={**env, "ATOMIC_AGENT_LLAMA_URL": fake.base_url}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Wrote new.txt."
    err = done.stderr
    assert "worktree: edits wait in session" in err and f"not yet in {ws}" in err
    assert "new.txt | 2 ++" in err and "1 file changed, 2 insertions(+)" in err
    session = err.split("atomic-agent sandbox apply ", 1)[1].split()[0]
    assert f"atomic-agent sandbox diff {session}" in err and f"atomic-agent sandbox discard {session}" in err
    assert err.index("worktree: edits wait") < err.index("· turn done")
    assert not (ws / "new.txt").exists()
    applied = run_cli(["--state-dir", str(state), "sandbox", "apply", session], env=env)
    assert applied.returncode == 0, applied.stderr
    assert (ws / "new.txt").read_text() == "one\ntwo\n"
