"""A second real llama-server for tool calls and embeddings, one per test session.

The starter model's own template has no tool support (llama-server silently drops
`tools`), so this server gets `--chat-template-file data/chatml_tools.jinja` (a minimal
ChatML + tools template written for these tests) and `--embeddings --pooling mean`
(chat keeps working on such a server). Same cached binary and model as the shared
`llama_server` fixture, its own free loopback port, torn down after the session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

TEMPLATE = Path(__file__).parent / "data" / "chatml_tools.jinja"


@attrs.frozen
class ToolServer:
    base_url: str
    port: int


@pytest.fixture(scope="session")
def tool_template_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ToolServer]:
    import os

    from atomic_agent.api import resolve_cache_dir
    from atomic_agent.plugins.llama_server.binary_build import ensure_binary
    from atomic_agent.plugins.llama_server.llama_config import LLAMA_BINARY_ENV
    from atomic_agent.plugins.llama_server.server_launch import start_server
    from atomic_agent.plugins.llama_server.server_process import LaunchSpec, ServerPaths, free_loopback_port
    from atomic_agent.plugins.llama_server.starter_model import ensure_starter_model
    from atomic_agent.plugins.llama_server.testing.llama_fixture import stop_session_server
    from atomic_agent.plugins.llama_server.thread_count import AUTO, chat_threads

    state = tmp_path_factory.mktemp("tool-template-llama")
    cache = resolve_cache_dir()
    try:
        model = ensure_starter_model(cache)
        binary = ensure_binary(os.environ.get(LLAMA_BINARY_ENV, ""), cache, model)
        spec = LaunchSpec(binary=binary, model=model, port=free_loopback_port(), ctx_size=4096, parallel=1,
                          threads=chat_threads(AUTO, embeddings_running=False), alias="smollm2-tools",
                          extra_args=("--chat-template-file", str(TEMPLATE), "--embeddings", "--pooling", "mean"))
        outcome = start_server(spec, ServerPaths.for_state_dir(state), timeout_s=120, die_with_parent=True)
    except Exception as exc:
        pytest.fail(f"could not start the tool-template llama-server: {exc}", pytrace=False)
    try:
        yield ToolServer(outcome.base_url, spec.port)
    finally:
        stop_session_server(state, outcome)
