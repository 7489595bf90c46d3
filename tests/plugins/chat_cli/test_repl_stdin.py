"""`atomic-agent repl` and its stdin when a read is abandoned: the real CLI in a subprocess,
the model's answers scripted by the loopback FakeLlamaServer.

A read of stdin runs in a thread that a cancel cannot stop. Ctrl+C at an approval prompt
withdraws the prompt; the line typed next is the REPL's next message, not swallowed by the
withdrawn prompt's read. Ctrl+C at the REPL's own prompt exits at once instead of waiting
for a line nobody reads any more."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import CLI
from tests.plugins.tools_cli.plugin_entry_points import plugin_env


def _call(tool: str, args: dict) -> str:
    return json.dumps([{"tool": tool, "args": args}])


class Repl:
    """`atomic-agent repl` with stdin a pipe this test writes to, and its output collected."""

    def __init__(self, tmp_path: Path, fake: FakeLlamaServer) -> None:
        home = tmp_path.resolve() / "home"
        self.ws, state = home / "ws", home / ".state"
        self.ws.mkdir(parents=True)
        state.mkdir()
        env = {**os.environ, **plugin_env(tmp_path / "site", {"HOME": str(home),
                                                              "ATOMIC_AGENT_LLAMA_URL": fake.base_url})}
        self.proc = subprocess.Popen([str(CLI), "--state-dir", str(state), "repl"], cwd=self.ws, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.out, self.err = bytearray(), bytearray()
        for stream, sink in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=self._collect, args=(stream, sink), daemon=True).start()

    @staticmethod
    def _collect(stream, sink: bytearray) -> None:
        while chunk := os.read(stream.fileno(), 65536):
            sink.extend(chunk)

    def type(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, what: str, sink: bytearray, timeout_s: float = 60) -> None:
        deadline = time.monotonic() + timeout_s
        while what.encode() not in sink:
            assert time.monotonic() < deadline and self.proc.poll() is None, \
                f"{what!r} never came; stderr:\n{self.err.decode(errors='replace')[-3000:]}"
            time.sleep(0.02)

    def exited_within(self, timeout_s: float) -> bool:
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def test_the_line_typed_after_ctrl_c_at_an_approval_prompt_is_the_repls_next_message(tmp_path: Path) -> None:
    script = [_call("os.fs.write", {"path": "out.txt", "content": "x\n"}), _call("reply", {"text": "second answer"})]
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        repl = Repl(tmp_path, fake)
        try:
            repl.type("write out.txt")
            repl.until("answer [", repl.err)  # the approval prompt waits on stdin
            repl.proc.send_signal(signal.SIGINT)  # Ctrl+C: the turn stops, the prompt is withdrawn
            repl.until("· turn ", repl.err)  # the turn has ended: the REPL reads its next line
            repl.type("the next message")
            repl.until("second answer", repl.out, timeout_s=30)
            repl.proc.stdin.close()  # type: ignore[union-attr]
            assert repl.exited_within(60)
        finally:
            repl.kill()
        assert not (repl.ws / "out.txt").exists()
        assert b"this prompt is withdrawn" in repl.err  # the prompt left on screen says it takes no answer


def test_ctrl_c_at_the_repls_prompt_exits_without_waiting_for_a_line(tmp_path: Path) -> None:
    with FakeLlamaServer(script=[_call("reply", {"text": "first answer"})], n_ctx=16384) as fake:
        repl = Repl(tmp_path, fake)
        try:
            repl.type("hello")
            repl.until("first answer", repl.out)
            time.sleep(0.5)  # the REPL is reading its next line
            repl.proc.send_signal(signal.SIGINT)
            assert repl.exited_within(30)  # stdin stays open: nothing else would end the read
        finally:
            repl.kill()
