"""`llama start` pairs the daemons: the chat server is primary, the embedding server
(`--embeddings`) optional; `llama stop` always tries both. Against stand-in executables."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.plugins.llama_server.server_process import ServerPaths, free_loopback_port, process_alive
from tests.plugins.llama_server.test_manage_lifecycle import env_for, fake_server_binary  # noqa: F401  (fixtures)


def configure(state: str, embeddings: dict) -> None:
    Path(state).mkdir(parents=True, exist_ok=True)
    (Path(state) / "config.json").write_text(json.dumps({"version": CONFIG_VERSION,
                                                         "llama": {"embeddings": embeddings}}))


def argv_of(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_start_pairs_an_embedding_daemon_and_stop_stops_both(
        tmp_path: Path, run_cli: Callable[..., object], fake_server_binary: Path,  # noqa: F811
        env_for: Callable[[Path], str], make_gguf: Callable[..., Path]) -> None:  # noqa: F811
    state = env_for(fake_server_binary)
    embed_port = free_loopback_port()
    configure(state, {"enabled": True, "port": embed_port, "model": str(make_gguf(tmp_path / "embed.gguf"))})
    started = run_cli("--state-dir", state, "llama", "start", "--port", str(free_loopback_port()), "--json")
    assert started.code == 0, started.err
    embedding = json.loads(started.out)["embedding"]
    assert embedding["running"] and embedding["url"] == f"http://127.0.0.1:{embed_port}"
    argv = argv_of(embedding["pid"])
    assert "--embeddings" in argv and argv[argv.index("--pooling") + 1] == "mean"
    chat_pid = json.loads(started.out)["pid"]
    assert "--embeddings" not in argv_of(chat_pid)
    status = json.loads(run_cli("--state-dir", state, "llama", "status", "--json").out)
    assert status["embedding"]["running"] and status["embedding"]["health"] == "ok"
    stopped = run_cli("--state-dir", state, "llama", "stop")
    assert stopped.code == 0 and f"stopped embedding daemon (pid {embedding['pid']})" in stopped.out
    assert not process_alive(chat_pid) and not process_alive(embedding["pid"])
    assert not ServerPaths.for_embeddings(Path(state)).pid_file.exists()


def test_a_failing_embedding_daemon_leaves_the_chat_server_up(
        run_cli: Callable[..., object], fake_server_binary: Path, env_for: Callable[[Path], str]) -> None:  # noqa: F811
    state = env_for(fake_server_binary)
    configure(state, {"enabled": True, "port": free_loopback_port(), "model": "no-such-embedding-model"})
    started = run_cli("--state-dir", state, "llama", "start", "--port", str(free_loopback_port()), "--json")
    try:
        assert started.code == 0, started.err
        body = json.loads(started.out)
        assert body["running"] and body["health"] == "ok"
        assert body["embedding"]["running"] is False and "no-such-embedding-model" in body["embedding"]["error"]
        assert "full-text search only" in started.err
    finally:
        run_cli("--state-dir", state, "llama", "stop")


def test_a_failing_chat_server_starts_no_embedding_daemon(
        tmp_path: Path, run_cli: Callable[..., object], fake_server_binary: Path,  # noqa: F811
        env_for: Callable[[Path], str], make_gguf: Callable[..., Path]) -> None:  # noqa: F811
    state = env_for(fake_server_binary)
    configure(state, {"enabled": True, "port": free_loopback_port(), "model": str(make_gguf(tmp_path / "e.gguf"))})
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        started = run_cli("--state-dir", state, "llama", "start", "--port", str(busy.getsockname()[1]))
    assert started.code != 0 and "already in use" in started.err
    assert not ServerPaths.for_embeddings(Path(state)).pid_file.exists()


def test_no_embedding_client_is_built_while_the_daemon_is_switched_off(tmp_path: Path) -> None:
    from atomic_agent.plugins.llama_server import _managed_embeddings
    from atomic_agent.plugins.llama_server.llama_config import EmbeddingDaemonConfig, LlamaConfig

    def runtime(enabled: bool) -> SimpleNamespace:
        cfg = LlamaConfig(embeddings=EmbeddingDaemonConfig(enabled=enabled, port=19333))
        return SimpleNamespace(config=SimpleNamespace(block=lambda _key: cfg), state_dir=tmp_path)

    assert _managed_embeddings(runtime(False)) is None
    client = _managed_embeddings(runtime(True))
    assert client.url == "http://127.0.0.1:19333" and client.model_id == "all-minilm-l6-v2"
