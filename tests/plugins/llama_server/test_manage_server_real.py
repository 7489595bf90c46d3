"""`atomic-agent llama install|start|status|stop` end to end: the real CLI executable, the
real llama-server binary and the starter model, on a free loopback port."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.server_process import free_loopback_port, port_in_use, process_alive
from atomic_agent.plugins.llama_server.thread_count import chat_threads

pytestmark = pytest.mark.llama_server

CLI = Path(sys.executable).parent / "atomic-agent"
_LLAMA_ENV = ("ATOMIC_AGENT_LLAMA_URL", "ATOMIC_AGENT_LLAMA_PORT")


def _cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _LLAMA_ENV}
    return subprocess.run([str(CLI), "--state-dir", str(state), *args], capture_output=True, text=True,
                          env=env, timeout=900, stdin=subprocess.DEVNULL)


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_start_status_stop_through_the_cli_leaves_no_process(tmp_path: Path) -> None:
    state = tmp_path / "state"
    installed = _cli(state, "llama", "install", "--json")  # builds/downloads once per machine
    assert installed.returncode == 0, installed.stderr
    port = free_loopback_port()
    pid = None
    try:
        started = _cli(state, "llama", "start", "--port", str(port))
        assert started.returncode == 0, started.stderr
        assert "running" in started.stdout
        status = json.loads(_cli(state, "llama", "status", "--json").stdout)
        pid = status["pid"]
        assert status["running"] is True and status["health"] == "ok" and status["mode"] == "managed"
        assert status["url"] == f"http://127.0.0.1:{port}"
        assert status["model"] == "smollm2-135m-instruct"
        assert status["modelPath"] == json.loads(installed.stdout)["model"]
        assert (status["nCtx"], status["totalSlots"]) == (4096, 2)
        assert status["threads"] == chat_threads(0, embeddings_running=False)  # auto: cores - 1, at least 1
        argv = _cmdline(pid)
        for flag, value in (("--host", "127.0.0.1"), ("--port", str(port)), ("-c", "8192"), ("--parallel", "2"),
                            ("--threads", str(chat_threads(0, embeddings_running=False)))):
            assert argv[argv.index(flag) + 1] == value
        assert "--no-webui" in argv and "--metrics" in argv
        assert os.getsid(pid) == pid  # detached: it leads its own session
        stopped = _cli(state, "llama", "stop")
        assert stopped.returncode == 0 and f"pid {pid}" in stopped.stdout
        assert not process_alive(pid)
        assert not (state / "llamacpp" / "llama-server.pid").exists()
        assert not port_in_use("127.0.0.1", port)
        after = json.loads(_cli(state, "llama", "status", "--json").stdout)
        assert after["running"] is False
    finally:
        if pid is not None and process_alive(pid):  # never leak a server, even on failure
            os.kill(pid, signal.SIGKILL)
