"""What `llama status` reports: the managed process (from the pid file) and what the
server at the effective URL says about itself."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import attrs

from .llama_config import MODE_EXTERNAL, MODE_MANAGED, LlamaConfig, effective_llama_url, loopback_url
from .server_health import HEALTH_UNREACHABLE, HealthSnapshot, probe_server
from .server_launch import url_of
from .server_process import ServerPaths, live_pid_record
from .shared_prompt_cache import PromptCacheState, prompt_cache_state

if TYPE_CHECKING:
    from atomic_agent.api import DoctorFinding


@attrs.frozen
class ServerStatus:
    mode: str
    url: str
    running: bool
    pid: int | None
    health: str
    model: str | None
    model_path: str | None
    n_ctx: int | None
    total_slots: int | None
    pid_file: str
    log_file: str
    detail: str = ""
    build: str = ""  # the installed build's variant and instruction sets ("" with llama.binary set)
    build_reason: str = ""
    prompt_cache: PromptCacheState | None = None  # whether cached prompts may cross conversations (running only)
    threads: int | None = None  # the running managed server's --threads

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "url": self.url, "running": self.running, "pid": self.pid,
                "health": self.health, "model": self.model, "modelPath": self.model_path, "nCtx": self.n_ctx,
                "totalSlots": self.total_slots, "pidFile": self.pid_file, "logFile": self.log_file,
                "detail": self.detail, "build": self.build, "buildReason": self.build_reason,
                "promptCache": (None if self.prompt_cache is None else
                                {"state": self.prompt_cache.state, "detail": self.prompt_cache.detail,
                                 "sharesAcrossConversations": self.prompt_cache.shares_across_conversations}),
                "threads": self.threads}


def server_status(cfg: LlamaConfig, state_dir: Path, environ: Mapping[str, str] | None = None) -> ServerStatus:
    """External mode (a URL is configured): running means that URL answers. Managed mode:
    see managed_status."""
    url, mode = effective_llama_url(cfg, environ)
    if mode != MODE_EXTERNAL:
        return managed_status(cfg, state_dir)
    paths = ServerPaths.for_state_dir(state_dir)
    snapshot = probe_server(url)
    running = snapshot.health != HEALTH_UNREACHABLE
    cache = prompt_cache_state(url, snapshot.build_info) if running else None
    return attrs.evolve(_status(mode, url, running, None, snapshot, paths), prompt_cache=cache)


def managed_status(cfg: LlamaConfig, state_dir: Path) -> ServerStatus:
    """The server `llama start` manages: running means the pid file names a live process (a
    stale file is cleaned), and the port it was started on wins over the config. Also names
    the installed build (variant, instruction sets, why) unless llama.binary overrides it."""
    paths = ServerPaths.for_state_dir(state_dir)
    record = live_pid_record(paths)
    if record is None:
        snapshot = HealthSnapshot(health=HEALTH_UNREACHABLE, detail="not started")
        status = _status(MODE_MANAGED, loopback_url(cfg.host, cfg.port), False, None, snapshot, paths)
    else:
        url = url_of(record)
        snapshot = probe_server(url)
        status = attrs.evolve(_status(MODE_MANAGED, url, True, record.pid, snapshot, paths),
                              prompt_cache=prompt_cache_state(url, snapshot.build_info, pid=record.pid),
                              threads=_threads_of(record.pid))
    return attrs.evolve(status, **_build_fields(cfg))


def _threads_of(pid: int) -> int | None:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
        return int(argv[argv.index("--threads") + 1])
    except (OSError, ValueError, IndexError):
        return None


def embedding_daemon_status(cfg: LlamaConfig, state_dir: Path) -> dict[str, Any]:
    """The second daemon: enabled in config, running (pid file), its URL and health."""
    paths = ServerPaths.for_embeddings(state_dir)
    record = live_pid_record(paths)
    url = url_of(record) if record is not None else loopback_url(cfg.host, cfg.embeddings.port)
    health = probe_server(url).health if record is not None else HEALTH_UNREACHABLE
    return {"enabled": cfg.embeddings.enabled, "running": record is not None,
            "pid": record.pid if record is not None else None, "url": url, "health": health,
            "model": record.model if record is not None else cfg.embeddings.model, "logFile": str(paths.log_file)}


def embedding_daemon_url(cfg: LlamaConfig, state_dir: Path) -> str:
    """Where the runtime asks for vectors: the running daemon's recorded port, else the configured one."""
    record = live_pid_record(ServerPaths.for_embeddings(state_dir))
    return url_of(record) if record is not None else loopback_url(cfg.host, cfg.embeddings.port)


class BuildFields(TypedDict, total=False):
    build: str
    build_reason: str


def _build_fields(cfg: LlamaConfig) -> BuildFields:
    from atomic_agent.api import resolve_cache_dir

    from .llama_binary import installed_build

    if cfg.binary:
        return {"build": f"llama.binary ({cfg.binary})"}
    build = installed_build(resolve_cache_dir())
    if build is None:
        return {"build": "not installed", "build_reason": "run `atomic-agent llama install`"}
    return {"build": build.variant.describe(), "build_reason": build.variant.reason}


def _status(mode: str, url: str, running: bool, pid: int | None, snapshot: HealthSnapshot,
            paths: ServerPaths) -> ServerStatus:
    return ServerStatus(mode=mode, url=url, running=running, pid=pid, health=snapshot.health,
                        model=snapshot.model, model_path=snapshot.model_path, n_ctx=snapshot.n_ctx,
                        total_slots=snapshot.total_slots, pid_file=str(paths.pid_file),
                        log_file=str(paths.log_file), detail=snapshot.detail)


def build_findings() -> list[DoctorFinding]:
    """What `doctor` says about llama-server: the installed build (variant, instruction sets,
    why, its proof) and whether this CPU has the AMX that crashes native builds."""
    import os

    from atomic_agent.api import DoctorFinding, resolve_cache_dir

    from .build_variant import read_cpu_report
    from .llama_binary import installed_build
    from .llama_config import LLAMA_BINARY_ENV

    cpu = read_cpu_report()
    features = f"{cpu.machine}, {len(cpu.flags)} CPU flags" + (", AMX present" if cpu.has_amx else "")
    override = os.environ.get(LLAMA_BINARY_ENV, "")
    if override:
        return [DoctorFinding("llama-server build", "ok", f"{LLAMA_BINARY_ENV} points at {override} ({features})",
                              path=override)]
    build = installed_build(resolve_cache_dir(), cpu)
    if build is None:
        return [DoctorFinding("llama-server build", "warn", f"no proven build for this CPU ({features})",
                              "`atomic-agent llama install` builds one and proves it by a real decode "
                              "(not needed if llama.url or llama.binary points at a server)")]
    return [DoctorFinding("llama-server build", "ok",
                          f"{build.variant.describe()}: {build.variant.reason}; proof: {build.proof} ({features})",
                          path=str(build.binary))]

def prompt_cache_findings(state_dir: Path) -> list[DoctorFinding]:
    """What `doctor` says about the server the runtime talks to: whether its RAM prompt cache
    may restore one conversation's tokens into another's reply (nothing when it is not running)."""
    from atomic_agent.api import DoctorFinding, read_raw_config

    try:
        raw = read_raw_config(state_dir / "config.json").get("llama", {})
    except Exception:
        raw = {}  # the core's own check reports a broken config
    cfg = LlamaConfig()
    if isinstance(raw, dict):
        picked = {k: raw[k] for k, t in (("url", str), ("host", str), ("port", int)) if isinstance(raw.get(k), t)}
        cfg = attrs.evolve(cfg, **picked)
    status = server_status(cfg, state_dir)
    if status.prompt_cache is None:
        return []
    level = "ok" if not status.prompt_cache.shares_across_conversations else "warn"
    advice = "" if level == "ok" else ("restart the managed server (`atomic-agent llama stop && atomic-agent llama "
                                       "start`)" if status.mode == MODE_MANAGED else
                                       "start that llama-server with --cache-ram 0")
    return [DoctorFinding("llama-server prompt cache", level, f"{status.url}: {status.prompt_cache.sentence()}",
                          advice)]
