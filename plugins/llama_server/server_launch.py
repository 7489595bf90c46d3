"""Bringing the managed server up: resolve binary and model, refuse a busy port, spawn,
wait for /health, and on any failure leave no process and no pid file behind."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from .binary_proof import signal_name
from .cache_lock import cache_lock
from .embedding_model import EMBEDDING_MODEL_ID, ensure_embedding_model
from .llama_binary import resolve_binary
from .llama_config import LlamaConfig, loopback_url
from .llama_errors import PortInUseError, ServerStartError
from .model_registry import find_model, resolve_model_file
from .server_health import HEALTH_OK, HealthSnapshot, check_health, probe_server
from .server_process import (
    LIFECYCLE_LOCK,
    LaunchSpec,
    PidRecord,
    ServerPaths,
    live_pid_record,
    log_tail,
    port_in_use,
    remove_pid_file,
    spawn_detached,
    terminate_process,
)
from .thread_count import chat_threads, embedding_threads

START_TIMEOUT_S = 120.0
_BIND_FAILURES = ("address already in use", "couldn't bind", "failed to bind")


@attrs.frozen
class StartOutcome:
    pid: int
    base_url: str
    snapshot: HealthSnapshot
    already_running: bool = False
    process: subprocess.Popen[bytes] | None = attrs.field(default=None, eq=False, repr=False)


def launch_spec_from_config(cfg: LlamaConfig, state_dir: Path, cache: Path, *, port: int | None = None,
                            model: str | None = None, vision: bool = False) -> LaunchSpec:
    """The command line for `llama start`; a missing binary or model raises with the fix.

    With `vision` (the vision plugin is on) a model registered with a projector that is still
    on disk starts with `--mmproj` and its image budget; otherwise the server is text only."""
    model_ref = model or cfg.model
    binary = resolve_binary(cfg.binary, cache)
    model_path = resolve_model_file(model_ref, state_dir, cache)
    entry = find_model(state_dir, cache, model_ref)
    return LaunchSpec(binary=binary, model=model_path, host=cfg.host, port=port or cfg.port,
                      ctx_size=cfg.ctx_size, parallel=launch_parallel(cfg),
                      threads=chat_threads(cfg.threads, embeddings_running=cfg.embeddings.enabled),
                      alias=entry.id if entry else model_path.stem, extra_args=tuple(cfg.extra_args),
                      mmproj=entry.projector() if vision and entry is not None else None)


def embedding_launch_spec(cfg: LlamaConfig, state_dir: Path, cache: Path, *, port: int | None = None,
                          on_line: Callable[[str], None] | None = None) -> LaunchSpec:
    """The second daemon's command line: the same binary, the embedding model (the built-in
    one is downloaded and converted on first use), `--embeddings --pooling`."""
    emb = cfg.embeddings
    binary = resolve_binary(cfg.binary, cache)
    if emb.model == EMBEDDING_MODEL_ID:
        model_path = ensure_embedding_model(cache, on_line=on_line)
        alias = EMBEDDING_MODEL_ID
    else:
        model_path = resolve_model_file(emb.model, state_dir, cache)
        entry = find_model(state_dir, cache, emb.model)
        alias = entry.id if entry else model_path.stem
    return LaunchSpec(binary=binary, model=model_path, host=cfg.host, port=port or emb.port, ctx_size=emb.ctx_size,
                      parallel=emb.parallel, threads=embedding_threads(emb.threads), alias=alias, pooling=emb.pooling)


def launch_parallel(cfg: LlamaConfig) -> int:
    """`--parallel` for a managed start: `parallel`, raised to 2 when `reflectionSlot` is on
    (a single slot would make every reflection evict the session's cache)."""
    return max(cfg.parallel, 2) if cfg.reflection_slot else cfg.parallel


def url_of(record: PidRecord) -> str:
    return loopback_url(record.host, record.port)


def start_server(spec: LaunchSpec, paths: ServerPaths, *, timeout_s: float = START_TIMEOUT_S,
                 die_with_parent: bool = False) -> StartOutcome:
    """Start llama-server and return once it answers /health with 200. Serialised per state
    dir, so two concurrent starts cannot overwrite each other's pid file. `die_with_parent`:
    see spawn_detached (the test fixture's servers)."""
    with cache_lock(paths.pid_file.parent / LIFECYCLE_LOCK):
        return _start_locked(spec, paths, timeout_s, die_with_parent)


def _start_locked(spec: LaunchSpec, paths: ServerPaths, timeout_s: float, die_with_parent: bool) -> StartOutcome:
    running = live_pid_record(paths)
    if running is not None:
        return StartOutcome(running.pid, url_of(running), probe_server(url_of(running)), already_running=True)
    if port_in_use(spec.host, spec.port):
        raise _port_error(spec)
    proc = spawn_detached(spec, paths, die_with_parent=die_with_parent)
    base_url = loopback_url(spec.host, spec.port)
    try:
        snapshot = _wait_until_healthy(proc, base_url, spec, paths, timeout_s)
    except BaseException:
        _discard(proc, paths)
        raise
    return StartOutcome(proc.pid, base_url, snapshot, process=proc)


def _wait_until_healthy(proc: subprocess.Popen[bytes], base_url: str, spec: LaunchSpec, paths: ServerPaths,
                        timeout_s: float) -> HealthSnapshot:
    deadline = time.monotonic() + timeout_s
    last = "unreachable"
    while True:
        code = proc.poll()
        if code is not None:
            tail = log_tail(paths.log_file, 25)
            if any(marker in line.lower() for line in tail for marker in _BIND_FAILURES):
                raise _port_error(spec)
            raise ServerStartError(start_failure_message(code, spec, paths.log_file, tail))
        last, _detail = check_health(base_url, timeout_s=1.0)
        if last == HEALTH_OK:
            return probe_server(base_url)
        if time.monotonic() >= deadline:
            raise ServerStartError(f"llama-server did not become healthy within {timeout_s:.0f} s (last /health: "
                                   f"{last}); it was stopped. A large model may need a longer --timeout; the log "
                                   f"is {paths.log_file}:\n" + "\n".join(log_tail(paths.log_file, 15)))
        time.sleep(0.1)


def start_failure_message(code: int, spec: LaunchSpec, log_file: Path, tail: list[str]) -> str:
    """What `llama start` (and the test fixture) say when the server died before /health:
    a death by signal is almost always a binary that does not suit this CPU."""
    lines = "\n".join(tail)
    died = signal_name(code)
    if died:
        return (f"llama-server died by {died} while starting, before it became healthy (it loads {spec.model.name} "
                "and decodes a first batch while starting). A crash there usually means the binary does not suit "
                "this CPU: on CPUs with AMX, llama.cpp's native build crashes on its first decode. Run "
                "`atomic-agent llama install --portable` to build and prove the portable variant, then start "
                f"again. Last lines of its log ({log_file}):\n{lines}")
    return (f"llama-server exited with code {code} while starting, before it became healthy. Fix the cause in "
            f"its log ({log_file}); last lines:\n{lines}")


def _discard(proc: subprocess.Popen[bytes], paths: ServerPaths) -> None:
    if proc.poll() is None:
        terminate_process(proc.pid, grace_s=5.0)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
    remove_pid_file(paths)


def _port_error(spec: LaunchSpec) -> PortInUseError:
    return PortInUseError(
        f"port {spec.port} on {spec.host} is already in use by another program, so llama-server cannot listen "
        f"there. Stop that program, or use another port: `atomic-agent llama start --port {spec.port + 1}`, and "
        "set llama.port (or ATOMIC_AGENT_LLAMA_PORT) to the same number so the runtime connects to it.")
