"""The real `atomic-agent tui` binary in a real terminal (tmux) against the real llama-server
fixture: type a message whose first step must move a file to the trash (`/tool os.fs.trash`), answer the
approval modal with y, steer while the turn runs, and read the screen with capture-pane.

The tiny model decides what the steer does; what must hold is the contract: the approval is
asked on screen and recorded as the user's, the steer is shown as applied or handed back and
sent next, it ends up in the transcript exactly once, and the app survives it all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.llama_server,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

CLI = Path(sys.executable).with_name("atomic-agent")


class Tmux:
    def __init__(self, name: str) -> None:
        self.name = name

    def run(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True, timeout=30).stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def text(self, text: str) -> None:
        self.run("send-keys", "-t", self.name, "-l", text)

    def wait(self, what: Callable[[str], bool], timeout: float, label: str) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if what(screen):
                return screen
            time.sleep(0.25)
        raise AssertionError(f"timed out waiting for {label}; the screen was:\n{screen}")


def test_the_tui_binary_asks_approves_and_steers_on_the_real_server(llama_server, tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    (work / "note.txt").write_text("an old note\n")
    env = {**os.environ, "ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "4",
           "ATOMIC_AGENT_SEED": "7", "ATOMIC_AGENT_MEMORY_REFLECTION": "0", "TERM": "xterm-256color"}
    tmux = Tmux(f"tui-e2e-{uuid.uuid4().hex[:8]}")
    command = f"{CLI} --state-dir {state} tui; echo TUI-EXITED-$?; sleep 30"
    subprocess.run(["tmux", "new-session", "-d", "-s", tmux.name, "-x", "110", "-y", "34", "-c", str(work),
                    command], check=True, env=env, timeout=30)
    try:
        tmux.wait(lambda s: "⏎ send" in s and "smollm2" in s.lower(), 60, "the app's first screen")
        tmux.text("/tool os.fs.trash move note.txt to the trash")
        # Enter only once the keys are in the chat editor (a panel focusing its list as it
        # mounts must not have taken them), however long the panels take to mount
        tmux.wait(lambda s: "move note.txt to the trash" in s, 60, "the typed command in the chat editor")
        tmux.keys("Enter")
        screen = tmux.wait(lambda s: "approval needed" in s, 240, "the approval modal")
        assert "move to trash" in screen and "y  allow this call once" in screen
        # the answer and the next words in one write, as a fast typist's keys arrive: the words
        # typed on while the modal closes go to the chat, and Enter steers the running turn
        tmux.text("yalso say thanks")
        tmux.keys("Enter")
        screen = tmux.wait(lambda s: "steer" in s, 60, "the steer on screen")
        tmux.wait(lambda s: "working" not in s and "queued" not in s and "approval needed" not in s,
                  300, "the turns to finish")
        screen = tmux.screen()
        assert "Traceback" not in screen and "TUI-EXITED" not in screen
        tmux.keys("C-q")
        tmux.wait(lambda s: "TUI-EXITED-0" in s, 30, "the app to quit cleanly")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", tmux.name], capture_output=True, timeout=30)
    audit = [json.loads(line) for line in (state / "audit" / "approvals.ndjson").read_text().splitlines()]
    asked = [a for a in audit if a["who"] == "user"]
    assert asked and asked[0]["approved"] is True and asked[0]["category"] == "fs_trash"
    assert not (work / "note.txt").exists()  # the approved call ran
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    runtime = Runtime(boot(state, environ={}))
    try:
        sessions = runtime.sessions.list()
        assert len(sessions) == 1
        users = [e.text for e in runtime.sessions.entries(sessions[0]["id"]) if e.kind == "user"]
    finally:
        import asyncio

        asyncio.run(runtime.close())
    assert users[0] == "move note.txt to the trash" and users.count("also say thanks") == 1
