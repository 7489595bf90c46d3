"""`llama start|stop|status|logs` and their error messages, against stand-in executables
(a shell script that fails, a small Python HTTP server that talks like llama-server)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.server_launch import start_server
from atomic_agent.plugins.llama_server.server_process import (
    LaunchSpec,
    PidRecord,
    ServerPaths,
    free_loopback_port,
    live_pid_record,
    process_alive,
    stop_recorded_server,
    write_pid_record,
)

FAKE_SERVER = r'''
import json, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
args = sys.argv[1:]
if args == ["--version"]:
    print("version: 0.0-fake-server", file=sys.stderr); sys.exit(0)
opt = lambda name, default=None: args[args.index(name) + 1] if name in args else default
if "--ignore-term" in args:
    signal.signal(signal.SIGTERM, lambda *_: print("got SIGTERM, ignoring it", flush=True))
port, ctx, parallel = int(opt("--port")), int(opt("-c")), int(opt("--parallel"))
loading = [3]  # answer 503 "Loading model" a few times first, like the real server
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self):
        if self.path == "/health":
            if loading[0] > 0:
                loading[0] -= 1
                return self.reply(503, {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
            return self.reply(200, {"status": "ok"})
        if self.path == "/props":
            return self.reply(200, {"default_generation_settings": {"n_ctx": ctx // parallel}, "total_slots": parallel,
                                    "model_alias": opt("--alias", opt("-m")), "model_path": opt("-m")})
        self.reply(404, {"error": {"code": 404, "message": "nope", "type": "not_found"}})
print(f"fake llama-server listening on 127.0.0.1:{port}", flush=True)
HTTPServer(("127.0.0.1", port), H).serve_forever()
'''


@pytest.fixture
def fake_server_binary(tmp_path: Path) -> Path:
    path = tmp_path / "fake-server" / "llama-server"
    path.parent.mkdir()
    path.write_text(f"#!{sys.executable}\n{FAKE_SERVER}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def env_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_gguf: Callable[..., Path]) -> Callable[[Path], str]:
    """Point the CLI at `binary` and a tiny registered GGUF; returns the state dir."""

    def setup(binary: Path) -> str:
        monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
        monkeypatch.setenv("ATOMIC_AGENT_LLAMA_BINARY", str(binary))
        make_gguf(tmp_path / "cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf", b"\x00" * 10)
        return str(tmp_path / "state")

    return setup


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _model_flag(tmp_path: Path, make_gguf: Callable[..., Path]) -> list[str]:
    return ["--model", str(make_gguf(tmp_path / "tiny.gguf"))]


def test_start_without_a_built_binary_says_run_llama_install(tmp_path: Path, run_cli: Callable[..., object],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "empty-cache"))
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "start")
    assert result.code == 2 and "`atomic-agent llama install`" in result.err and "not installed" in result.err


def test_start_without_the_starter_model_says_run_llama_install(tmp_path: Path, run_cli: Callable[..., object],
                                                                 fake_binary: Callable[[str], Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("ATOMIC_AGENT_LLAMA_BINARY", str(fake_binary("exit 1")))
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "start")
    assert result.code == 2 and "starter model" in result.err and "not downloaded yet" in result.err


def test_start_on_a_busy_port_names_the_port_and_the_fix(tmp_path: Path, run_cli: Callable[..., object],
                                                         fake_binary: Callable[[str], Path],
                                                         env_for: Callable[[Path], str], busy_port: int) -> None:
    state = env_for(fake_binary("exit 1"))
    result = run_cli("--state-dir", state, "llama", "start", "--port", str(busy_port))
    assert result.code == 2
    assert f"port {busy_port} on 127.0.0.1 is already in use" in result.err and "--port" in result.err
    assert not ServerPaths.for_state_dir(Path(state)).pid_file.exists()


def test_server_exiting_during_start_shows_the_log_tail(tmp_path: Path, run_cli: Callable[..., object],
                                                        fake_binary: Callable[[str], Path],
                                                        env_for: Callable[[Path], str]) -> None:
    state = env_for(fake_binary('echo "error: invalid argument: --bogus"; exit 3'))
    result = run_cli("--state-dir", state, "llama", "start", "--port", str(free_loopback_port()))
    assert result.code == 2
    assert "exited with code 3 while starting" in result.err and "error: invalid argument: --bogus" in result.err
    assert not ServerPaths.for_state_dir(Path(state)).pid_file.exists()


def test_bind_failure_in_the_log_is_reported_as_a_busy_port(tmp_path: Path, run_cli: Callable[..., object],
                                                            fake_binary: Callable[[str], Path],
                                                            env_for: Callable[[Path], str]) -> None:
    state = env_for(fake_binary('echo "start: couldn\'t bind HTTP server socket, hostname: 127.0.0.1"; exit 1'))
    port = free_loopback_port()
    result = run_cli("--state-dir", state, "llama", "start", "--port", str(port))
    assert result.code == 2 and f"port {port} on 127.0.0.1 is already in use" in result.err


def test_start_status_logs_stop_against_a_server_that_loads_first(tmp_path: Path, run_cli: Callable[..., object],
                                                                  fake_server_binary: Path,
                                                                  env_for: Callable[[Path], str]) -> None:
    state = env_for(fake_server_binary)
    port = free_loopback_port()
    started = run_cli("--state-dir", state, "llama", "start", "--port", str(port), "--json")
    assert started.code == 0, started.err
    status = json.loads(run_cli("--state-dir", state, "llama", "status", "--json").out)
    assert status["running"] and status["health"] == "ok" and status["mode"] == "managed"
    assert status["url"] == f"http://127.0.0.1:{port}"
    assert (status["model"], status["nCtx"], status["totalSlots"]) == ("smollm2-135m-instruct", 4096, 2)
    pid = status["pid"]
    again = run_cli("--state-dir", state, "llama", "start", "--port", str(port))
    assert again.code == 0 and "already running" in again.err
    logs = run_cli("--state-dir", state, "llama", "logs", "-n", "5")
    assert f"fake llama-server listening on 127.0.0.1:{port}" in logs.out
    stopped = run_cli("--state-dir", state, "llama", "stop")
    assert stopped.code == 0 and f"stopped llama-server (pid {pid})" in stopped.out
    assert not process_alive(pid)
    assert not ServerPaths.for_state_dir(Path(state)).pid_file.exists()
    after = json.loads(run_cli("--state-dir", state, "llama", "status", "--json").out)
    assert not after["running"] and after["pid"] is None


def test_stale_pid_file_of_a_dead_process_is_cleaned(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    write_pid_record(paths, PidRecord(pid=dead.pid, host="127.0.0.1", port=19091, binary="/x/llama-server", model="m"))
    status = json.loads(run_cli("--state-dir", str(tmp_path / "state"), "llama", "status", "--json").out)
    assert status["running"] is False and not paths.pid_file.exists()


def test_pid_reused_by_another_program_is_not_signalled(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    write_pid_record(paths, PidRecord(pid=os.getpid(), host="127.0.0.1", port=19091, binary="/x/llama-server", model="m"))
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "stop")
    assert result.code == 0 and "not running" in result.out and not paths.pid_file.exists()


def test_unreadable_pid_file_counts_as_stale(tmp_path: Path) -> None:
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    paths.pid_file.parent.mkdir(parents=True)
    paths.pid_file.write_text("garbage")
    assert live_pid_record(paths) is None and not paths.pid_file.exists()


def test_stop_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path, fake_server_binary: Path,
                                                           make_gguf: Callable[..., Path]) -> None:
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    spec = LaunchSpec(binary=fake_server_binary, model=make_gguf(tmp_path / "m.gguf"), port=free_loopback_port(),
                      extra_args=("--ignore-term",))
    started = start_server(spec, paths)  # healthy, so the SIGTERM handler is installed
    record = stop_recorded_server(paths, grace_s=0.3)
    assert record is not None and record.pid == started.pid
    assert not process_alive(started.pid) and not paths.pid_file.exists()
    assert "got SIGTERM, ignoring it" in paths.log_file.read_text()  # so SIGKILL ended it


def test_logs_before_any_start_is_a_clear_error(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "logs")
    assert result.code == 2 and "no llama-server log yet" in result.err


def test_status_in_external_mode_probes_the_configured_url(tmp_path: Path, run_cli: Callable[..., object],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    port = free_loopback_port()  # nothing listens there
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "config.json").write_text(json.dumps({"version": 1, "llama": {"url": f"http://127.0.0.1:{port}/"}}))
    status = json.loads(run_cli("--state-dir", str(tmp_path / "state"), "llama", "status", "--json").out)
    assert (status["mode"], status["url"], status["running"], status["health"]) == (
        "external", f"http://127.0.0.1:{port}", False, "unreachable")
