"""`atomic-agent sidecar` as a real subprocess, spoken to over its stdin/stdout pipes.

Every line read from stdout must be one JSON object that validates against the published
schema. Until the `sidecar` entry point is registered in pyproject, the plugin is
installed for the child through a throwaway distribution on PYTHONPATH (the same on-disk
shape pip leaves), together with a plugin that contributes a gated file-writing tool.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from atomic_agent.plugins.sidecar.protocol_schema import outgoing_problem
from tests.fake_distribution import write_distribution

WAIT_S = 60.0  # a safety net for a hung child, never a speed expectation
ATOMIC_AGENT = Path(sys.executable).parent / "atomic-agent"

GATED_TOOL_PLUGIN = '''
from atomic_agent.api import ResourceClass, ToolResult, ToolSpec, hookimpl

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
          "required": ["name", "text"]}


async def _write(args, ctx):
    target = ctx.working_dir / args["name"]
    if not await ctx.request_approval("fs_write_workspace", f"write {target}"):
        return ToolResult.error("the user denied the write")
    target.write_text(args["text"])
    return ToolResult.ok(f"wrote {args['name']}")


@hookimpl
def register_tools(runtime):
    return [ToolSpec("test.note_write", "Write a note file (asks first).", SCHEMA, ResourceClass.APPROVAL_GATED,
                     _write, approval_category="fs_write_workspace")]
'''


def plugin_site(root: Path) -> Path:
    site = root / "site"
    if site.exists():
        return site
    eps = {"sidecar_test_tools": "sidecar_test_tools"}
    if not any(ep.name == "sidecar" for ep in entry_points(group="atomic_agent")):
        eps["sidecar"] = "atomic_agent.plugins.sidecar"
    write_distribution(site, "sidecar-test-plugins", "0.0.1", {"sidecar_test_tools": GATED_TOOL_PLUGIN}, eps)
    return site


def quiet_state_dir(state: Path, config: dict[str, Any] | None = None) -> Path:
    """A state dir whose memory plugins stay out of the way (no sub-call completions)."""
    state.mkdir(parents=True, exist_ok=True)
    disabled = ["memory_reflection", "memory_notes", "memory_profile"]
    (state / "config.json").write_text(json.dumps({"plugins": {"disabled": disabled}, **(config or {})}))
    return state


class SidecarProcess:
    def __init__(self, tmp_path: Path, env: dict[str, str], *args: str, config: dict[str, Any] | None = None,
                 log: str = "sidecar.stderr") -> None:
        self.state = quiet_state_dir(tmp_path / "state", config)
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
        child_env.update(env)
        paths = [str(plugin_site(tmp_path)), child_env.get("PYTHONPATH")]
        child_env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        self.stderr_path = tmp_path / log
        self._stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(self.state), "sidecar", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                                     cwd=tmp_path, env=child_env)
        self.messages: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            text = raw.decode("utf-8")
            try:
                message = json.loads(text)
            except json.JSONDecodeError:
                self.problems.append(f"stdout carried a non-protocol line: {text[:200]!r}")
                continue
            problem = outgoing_problem(message) if isinstance(message, dict) else "not an object"
            if problem:
                self.problems.append(f"{problem} in {text.strip()[:300]}")
            self._inbox.put(message)
        self._inbox.put(None)

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, kind: str, **fields: Any) -> int:
        self._next_id += 1
        self.write((json.dumps({"id": self._next_id, "type": kind, **fields}) + "\n").encode())
        return self._next_id

    def next_message(self) -> dict[str, Any]:
        message = self._inbox.get(timeout=WAIT_S)
        if message is None:
            raise AssertionError(f"the sidecar closed stdout; stderr:\n{self.stderr_text()}")
        self.messages.append(message)
        return message

    def until(self, predicate: Any) -> dict[str, Any]:
        while True:
            message = self.next_message()
            if predicate(message):
                return message

    def response(self, request_id: int | None) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "response" and m["id"] == request_id)

    def call(self, kind: str, **fields: Any) -> dict[str, Any]:
        response = self.response(self.send(kind, **fields))
        assert response["ok"], response
        return response["result"]

    def event(self, kind: str, turn_id: str | None = None) -> dict[str, Any]:
        message = self.until(lambda m: m["type"] == "event" and m["event"]["type"] == kind
                             and (turn_id is None or m["event"].get("turnId") == turn_id))
        return message["event"]

    def events(self) -> list[dict[str, Any]]:
        return [m["event"] for m in self.messages if m["type"] == "event"]

    def close_stdin_and_wait(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self._wait_and_collect()

    def signal_and_wait(self, sig: int) -> int:
        """Send a real signal (SIGTERM, SIGINT) and collect what the sidecar wrote before exiting."""
        self.proc.send_signal(sig)
        return self._wait_and_collect()

    def _wait_and_collect(self) -> int:
        code = self.proc.wait(timeout=WAIT_S)
        while True:  # collect what was written before exit
            try:
                message = self._inbox.get(timeout=WAIT_S)
            except queue.Empty:
                break
            if message is None:
                break
            self.messages.append(message)
        return code

    def stderr_text(self) -> str:
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT_S)
        self._stderr.close()
