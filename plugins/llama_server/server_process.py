"""The managed llama-server process: its pid file, spawning it detached, telling whether it
still runs, and stopping it (SIGTERM, then SIGKILL after a grace period)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import attrs

from atomic_agent.api import write_atomic

from .cache_locations import llamacpp_state_dir
from .llama_errors import ServerStopError

PID_FILE = "llama-server.pid"
LOG_FILE = "llama-server.log"
EMBED_PID_FILE = "llama-embed.pid"
EMBED_LOG_FILE = "llama-embed.log"
LIFECYCLE_LOCK = ".lifecycle.lock"
STOP_GRACE_S = 10.0
KILL_WAIT_S = 5.0


@attrs.frozen
class ServerPaths:
    pid_file: Path
    log_file: Path

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ServerPaths:
        base = llamacpp_state_dir(state_dir)
        return cls(pid_file=base / PID_FILE, log_file=base / LOG_FILE)

    @classmethod
    def for_embeddings(cls, state_dir: Path) -> ServerPaths:
        """The second daemon's pid file and log (`llama start` with llama.embeddings on)."""
        base = llamacpp_state_dir(state_dir)
        return cls(pid_file=base / EMBED_PID_FILE, log_file=base / EMBED_LOG_FILE)


VISION_BUDGET_ARGS = ("--image-min-tokens", "560", "--image-max-tokens", "560", "--ubatch-size", "1024",
                      "--batch-size", "2048")


@attrs.frozen
class LaunchSpec:
    """Everything the llama-server command line is built from."""

    binary: Path
    model: Path
    host: str = "127.0.0.1"
    port: int = 19091
    ctx_size: int = 8192
    parallel: int = 2
    threads: int = 1
    alias: str = ""  # what /props model_alias and /v1 `model` report; "" = the model path
    extra_args: tuple[str, ...] = ()
    pooling: str = ""  # set: an embedding-only server (`--embeddings --pooling POOLING`)
    mmproj: Path | None = None  # set: the model's vision projector, with the image budget below

    def vision_args(self) -> list[str]:
        """`--mmproj` and the image budget that must travel with it, or nothing.

        The budget is one bundle, never emitted on its own: 560 image tokens (at the default of
        about 70 the image embedding is too coarse and the Gemma-3/4 and Qwen-VL families invent
        what they cannot see), and a micro-batch that holds all of them, because their vision
        attention is non-causal and expects the whole image in one ubatch."""
        if self.mmproj is None:
            return []
        return ["--mmproj", str(self.mmproj), *VISION_BUDGET_ARGS]

    def argv(self) -> list[str]:
        args = [str(self.binary), "--host", self.host, "--port", str(self.port), "-m", str(self.model),
                "-c", str(self.ctx_size), "--parallel", str(self.parallel), "--threads", str(self.threads),
                "--no-webui", "--metrics",
                # the RAM prompt cache can restore one conversation's tokens into another's slot
                # (ggml-org/llama.cpp#27148): off, so no session's content reaches another's reply
                "--cache-ram", "0"]
        if self.pooling:
            # a whole input has to fit one micro-batch: as large as a slot's context
            per_slot = str(max(self.ctx_size // max(self.parallel, 1), 64))
            args += ["--embeddings", "--pooling", self.pooling, "--batch-size", per_slot, "--ubatch-size", per_slot]
        if self.alias:
            args += ["--alias", self.alias]
        return args + self.vision_args() + list(self.extra_args)


@attrs.frozen
class PidRecord:
    """What the pid file holds: the process and how it was started (status reads the port)."""

    pid: int
    host: str
    port: int
    binary: str
    model: str
    alias: str = ""
    started_at: float = 0.0

    def to_json(self) -> dict[str, object]:
        return attrs.asdict(self)


def write_pid_record(paths: ServerPaths, record: PidRecord) -> None:
    write_atomic(paths.pid_file, json.dumps(record.to_json(), indent=2) + "\n", mode=0o644)


def _read_pid_record(paths: ServerPaths) -> PidRecord | None:
    try:
        raw = json.loads(paths.pid_file.read_text(encoding="utf-8"))
        return PidRecord(pid=int(raw["pid"]), host=str(raw["host"]), port=int(raw["port"]),
                         binary=str(raw["binary"]), model=str(raw["model"]), alias=str(raw.get("alias", "")),
                         started_at=float(raw.get("started_at", 0.0)))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return PidRecord(pid=-1, host="", port=0, binary="", model="")  # unreadable: treated as stale


def live_pid_record(paths: ServerPaths) -> PidRecord | None:
    """The record of a server that is still running; a stale pid file (dead process, or the
    pid now belongs to another program) is removed and None returned."""
    record = _read_pid_record(paths)
    if record is None:
        return None
    if record.pid > 0 and process_alive(record.pid) and _runs_binary(record.pid, record.binary):
        return record
    remove_pid_file(paths)
    return None


def remove_pid_file(paths: ServerPaths) -> None:
    try:
        paths.pid_file.unlink()
    except FileNotFoundError:
        pass


def process_alive(pid: int) -> bool:
    """True while `pid` runs. Reaps it when it is our own exited child, and counts a zombie
    as dead (kill(pid, 0) succeeds on zombies)."""
    try:
        reaped, _status = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    except ChildProcessError:
        pass  # not our child: the usual case for a server started by an earlier command
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _proc_state(pid) not in {"Z", "X"}


def _proc_state(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # the command name is in parentheses and may itself contain spaces or parentheses
    return stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else ""


def _runs_binary(pid: int, binary: str) -> bool:
    """Whether `pid` still is the program we started (pids get reused). A script run through
    its shebang shows the interpreter as argv[0] and its own path as argv[1]."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
    except OSError:
        return True  # no /proc (not Linux): trust the pid
    return binary in (arg.decode(errors="replace") for arg in argv)


def port_in_use(host: str, port: int) -> bool:
    """True when something already listens on host:port (bind test, as the server will do)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT leftovers do not count
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent(parent: int) -> None:
    """In the child before exec: ask the kernel for SIGKILL when the parent dies (Linux), and
    go at once if the parent is already gone (it died between fork and this call)."""
    import ctypes

    pr_set_pdeathsig = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return  # not Linux: the caller's own cleanup is all there is
    if os.getppid() != parent:
        os._exit(1)


def spawn_detached(spec: LaunchSpec, paths: ServerPaths, *, die_with_parent: bool = False) -> subprocess.Popen[bytes]:
    """Start the server in its own session (it outlives this command and ignores our Ctrl-C),
    output appended to the log, and write the pid file. `die_with_parent` (test servers) ties
    its life to this process instead: killed, even by SIGKILL, it takes the server along."""
    paths.log_file.parent.mkdir(parents=True, exist_ok=True)
    with paths.log_file.open("ab") as log:
        log.write(f"\n=== atomic-agent starting: {' '.join(spec.argv())}\n".encode())
        log.flush()
        parent = os.getpid()
        proc = subprocess.Popen(spec.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True, cwd=paths.log_file.parent,
                                preexec_fn=(lambda: _die_with_parent(parent)) if die_with_parent else None)
    write_pid_record(paths, PidRecord(pid=proc.pid, host=spec.host, port=spec.port, binary=str(spec.binary),
                                      model=str(spec.model), alias=spec.alias, started_at=time.time()))
    return proc


def terminate_process(pid: int, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM, wait up to `grace_s`, then SIGKILL; returns once the process is gone."""
    _signal(pid, signal.SIGTERM)
    if _wait_gone(pid, grace_s):
        return
    _signal(pid, signal.SIGKILL)
    if not _wait_gone(pid, KILL_WAIT_S):
        raise ServerStopError(f"llama-server (pid {pid}) is still running after SIGTERM and SIGKILL. Check it "
                              f"with `ps -p {pid}`; it may be stuck in the kernel (D state).")


def stop_recorded_server(paths: ServerPaths, grace_s: float = STOP_GRACE_S) -> PidRecord | None:
    """Stop the server the pid file names and remove the file; None when none was running."""
    from .cache_lock import cache_lock

    with cache_lock(paths.pid_file.parent / LIFECYCLE_LOCK):
        record = live_pid_record(paths)
        if record is None:
            return None
        terminate_process(record.pid, grace_s)
        remove_pid_file(paths)
        return record


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        # the server leads its own session, so signal the whole group (nothing it forks survives)
        if os.getpgid(pid) == pid:
            os.killpg(pid, sig)
        else:
            os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        raise ServerStopError(f"not allowed to signal llama-server (pid {pid}): {exc.strerror}. Stop it as the "
                              "user that started it.") from exc


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while process_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def log_tail(log_file: Path, lines: int = 40) -> list[str]:
    try:
        with log_file.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 256 * 1024))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    return text.splitlines()[-lines:] if lines > 0 else []
