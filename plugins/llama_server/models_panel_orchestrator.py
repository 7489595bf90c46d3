"""What the TUI's Models panel may do, and the only code of the panel that touches the runtime.

The managed llama-server (status, start, stop, install — the chat server and, when
configured, its embedding daemon) and the local models (list, use, pull). These block on
processes and the network, so they run in a worker thread; an install or a pull reports its
progress through the callback it is given, from that thread, and stops at its next report
once its task is cancelled (`run_stoppable`). `use` writes `llama.model` to config.json; the
running server keeps its model until restarted. Nothing here imports Textual.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar
from urllib.parse import urlsplit

import attrs

from .llama_errors import DownloadError, LlamaServerError, WorkStopped

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

LLAMA_BLOCK = "llama"
START_TIMEOUT_S = 120.0

P = ParamSpec("P")
T = TypeVar("T")


@attrs.frozen
class ModelRow:
    id: str
    source: str
    present: bool
    size: str
    current: bool
    path: str


def size_text(n: int) -> str:
    if n <= 0:
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


async def run_stoppable(blocking: Callable[[Callable[P, None]], T], on_progress: Callable[P, None],
                        stopped: str) -> T:
    """`blocking(progress)` in a worker thread, `progress` passing each report on to `on_progress`.

    A thread cannot be cancelled, and `asyncio.run` waits for it at exit: left alone, a
    build or a download cancelled with the TUI would keep the quit waiting until it is done.
    So a cancel makes the thread's next report raise WorkStopped(`stopped`), and the task
    ends cancelled only once the thread has ended."""
    stop = threading.Event()

    def progress(*args: P.args, **kwargs: P.kwargs) -> None:
        if stop.is_set():
            raise WorkStopped(stopped)
        on_progress(*args, **kwargs)

    # the caller's context goes along, as with asyncio.to_thread
    future = asyncio.get_running_loop().run_in_executor(None, contextvars.copy_context().run, blocking, progress)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        stop.set()
        await asyncio.gather(future, return_exceptions=True)
        raise


class ModelsPanelOrchestrator:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime

    @property
    def config(self) -> Any:
        return self.runtime.config.block(LLAMA_BLOCK)

    @property
    def state_dir(self) -> Path:
        return Path(self.runtime.state_dir)

    @staticmethod
    def cache() -> Path:
        from atomic_agent.api import resolve_cache_dir

        return resolve_cache_dir()

    # -- the server ------------------------------------------------------------------------
    async def status_lines(self) -> list[str]:
        """The managed server's state; probing a running one is an HTTP call, so it runs off the loop."""
        from .server_status import embedding_daemon_status, server_status

        cfg, state = self.config, self.state_dir
        status = await asyncio.to_thread(server_status, cfg, state)
        embedding = await asyncio.to_thread(embedding_daemon_status, cfg, state)
        lines = [f"llama-server ({status.mode}): {'running' if status.running else 'stopped'}"
                 + (f", pid {status.pid}" if status.pid else "") + f", {status.url}",
                 f"health: {status.health}" + (f" ({status.detail})" if status.detail else "")]
        if status.running:
            lines.append(f"model: {status.model or '-'}; context per slot {status.n_ctx or '-'}, "
                         f"slots {status.total_slots or '-'}")
        if embedding.get("enabled") or embedding.get("running"):
            lines.append(f"embedding daemon: {'running' if embedding.get('running') else 'stopped'}")
        if status.build:
            lines.append(f"build: {status.build}")
        return lines

    def external(self) -> bool:
        from .llama_config import MODE_EXTERNAL, effective_llama_url

        return effective_llama_url(self.config)[1] == MODE_EXTERNAL

    def running(self) -> bool:
        from .server_process import ServerPaths, live_pid_record

        return live_pid_record(ServerPaths.for_state_dir(self.state_dir)) is not None

    async def start(self) -> str:
        """Start the chat server with the model config.json names now (and the embedding daemon
        when llama.embeddings is on; its failure leaves the chat server up). LlamaServerError says why not."""
        return await asyncio.to_thread(self._start_blocking)

    def _start_blocking(self) -> str:
        # resolving the binary runs it (--version) and the embedding model may be fetched: all off the loop
        from .server_launch import embedding_launch_spec, launch_spec_from_config, start_server
        from .server_process import ServerPaths

        cfg, state, cache = self.config, self.state_dir, self.cache()
        from .command_context import vision_enabled

        spec = launch_spec_from_config(cfg, state, cache, model=self.current_model(),
                                       vision=vision_enabled(self.runtime.config))
        outcome = start_server(spec, ServerPaths.for_state_dir(state), timeout_s=START_TIMEOUT_S)
        said = (f"llama-server already running (pid {outcome.pid})" if outcome.already_running
                else f"llama-server started (pid {outcome.pid}) at {outcome.base_url}")
        if cfg.embeddings.enabled:
            try:
                start_server(embedding_launch_spec(cfg, state, cache), ServerPaths.for_embeddings(state),
                             timeout_s=START_TIMEOUT_S)
            except (LlamaServerError, OSError) as exc:
                said += f"; the embedding daemon did not start, recall uses full-text search only: {exc}"
        return said

    async def install(self, on_progress: Callable[[str, tuple[int, int] | None], None]) -> str:
        """Build and prove llama-server for this machine, as `atomic-agent llama install` does
        (the starter model first: the proof decodes on it). `on_progress(step, (done, total))`
        is called from the build thread with each step and each counted compile line; a cancel
        stops the build at its next one."""
        if self.config.binary:
            raise LlamaServerError(f"llama.binary points at {self.config.binary}: that build is used as it is and "
                                   "nothing is installed. Clear llama.binary to have one built for this machine.")
        return await run_stoppable(self._install_blocking, on_progress,
                                   "the llama-server install was stopped before it finished and nothing was "
                                   "installed. The next install starts the build over and removes whatever this "
                                   "one left in the cache.")

    def _install_blocking(self, on_progress: Callable[[str, tuple[int, int] | None], None]) -> str:
        from . import binary_build
        from .starter_model import ensure_starter_model

        cache = self.cache()
        step = ["fetching the starter model (about 93 MB; the build is proven on it)"]
        on_progress(step[0], None)
        model = ensure_starter_model(cache)

        def on_step(message: str) -> None:
            step[0] = message
            on_progress(message, None)

        def on_line(line: str) -> None:
            counted = binary_build.build_progress(line)
            if counted is not None:
                on_progress(step[0], counted)

        build = binary_build.install_llama_server(cache, model, on_step=on_step, on_line=on_line,
                                                  fetch_sdist=binary_build.fetch_llama_sdist)
        return f"llama-server {build.binary_version} is installed and proven: {build.binary}"

    async def stop(self) -> str:
        """Stop both daemons (both pid files are always tried)."""
        from .server_process import ServerPaths, stop_recorded_server

        stopped = []
        for label, paths in (("llama-server", ServerPaths.for_state_dir(self.state_dir)),
                             ("embedding daemon", ServerPaths.for_embeddings(self.state_dir))):
            record = await asyncio.to_thread(stop_recorded_server, paths)
            if record is not None:
                stopped.append(f"{label} (pid {record.pid})")
        return "stopped " + " and ".join(stopped) if stopped else "llama-server was not running"

    # -- local models ----------------------------------------------------------------------
    def current_model(self) -> str:
        """llama.model as config.json says now (the runtime's config is the boot snapshot)."""
        from atomic_agent.api import ConfigError, read_raw_config

        try:
            raw = read_raw_config(self.runtime.config.path)
        except ConfigError:
            return str(self.config.model)
        block = raw.get(LLAMA_BLOCK)
        chosen = block.get("model") if isinstance(block, dict) else None
        return chosen if isinstance(chosen, str) and chosen else str(self.config.model)

    def models(self) -> list[ModelRow]:
        from .model_registry import list_models

        current = self.current_model()
        return [ModelRow(m.id, m.source, m.present(), size_text(m.size_bytes), m.id == current, m.path)
                for m in list_models(self.state_dir, self.cache())]

    def use(self, model_id: str) -> ModelRow:
        """Set llama.model; LlamaServerError for an unknown id or a model whose file is missing."""
        from atomic_agent.api import config_file, read_raw_config

        from .model_registry import find_model

        entry = find_model(self.state_dir, self.cache(), model_id)
        if entry is None:
            raise LlamaServerError(f"no model with id {model_id!r} is registered")
        if not entry.present():
            raise LlamaServerError(f"{model_id}'s file is missing ({entry.path}); pull it again first")
        path = self.runtime.config.path
        config_file.save_raw_config(path, config_file.set_key(read_raw_config(path), "llama.model", model_id), self.runtime.config_blocks)
        return next(r for r in self.models() if r.id == model_id)

    @staticmethod
    def check_pull_url(url: str) -> str:
        """The URL stripped, or DownloadError saying what is wrong before anything is fetched."""
        from .model_download import file_name_from_url

        url = url.strip()
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise DownloadError(f"{url or '(empty)'!r} is not an http(s) URL of a .gguf file")
        file_name_from_url(url)
        return url

    async def pull(self, url: str, on_progress: Callable[[int, int | None], None]) -> tuple[ModelRow, bool]:
        """Download (resumable, checked to be a GGUF) and register; (the row, already present).
        A cancel stops the download at its next chunk and keeps the partial file."""
        from .cache_locations import models_dir
        from .model_download import pull_model
        from .model_registry import SOURCE_PULLED, register_model

        url, cache = self.check_pull_url(url), self.cache()
        dest = models_dir(cache)
        result = await run_stoppable(lambda progress: pull_model(url, dest, on_progress=progress), on_progress,
                                     f"the pull of {url} was stopped before it finished; what arrived is kept in "
                                     f"{dest} as a .part file, and the same pull resumes from there.")
        entry = register_model(self.state_dir, cache, result.path, None, source=SOURCE_PULLED,
                               sha256=result.sha256, url=url)
        return next(r for r in self.models() if r.id == entry.id), result.already_present
