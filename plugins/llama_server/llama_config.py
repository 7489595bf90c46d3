"""The `llama` config block and how the server URL (and so the mode) is decided."""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from atomic_agent.api import int_field, value_field

from .embedding_model import EMBEDDING_MODEL_ID
from .starter_model import STARTER_MODEL_ID

LLAMA_URL_ENV = "ATOMIC_AGENT_LLAMA_URL"
LLAMA_PORT_ENV = "ATOMIC_AGENT_LLAMA_PORT"
LLAMA_BINARY_ENV = "ATOMIC_AGENT_LLAMA_BINARY"
DEFAULT_PORT = 19091
DEFAULT_EMBEDDING_PORT = 19092
LLAMA_EMBEDDINGS_ENV = "ATOMIC_AGENT_LLAMA_EMBEDDINGS"

MODE_EXTERNAL = "external"
MODE_MANAGED = "managed"


@attrs.frozen
class EmbeddingDaemonConfig:
    """`llama.embeddings`: the optional second managed server, started with `--embeddings`.

    llama-server in embedding mode serves only pooled vectors, so it is a process of its own
    beside the chat server; `llama start` starts it after the chat server when enabled.
    """

    enabled: bool = value_field(False, env=LLAMA_EMBEDDINGS_ENV)
    # the built-in id (converted from its PyPI wheel on first start) or a GGUF path / registered id
    model: str = value_field(EMBEDDING_MODEL_ID)
    port: int = int_field(DEFAULT_EMBEDDING_PORT, 1, 65535)
    ctx_size: int = int_field(2048, 128, 1_048_576)
    parallel: int = int_field(4, 1, 64)
    threads: int = int_field(0, 0, 1024)  # 0: one thread (thread_count.embedding_threads)
    pooling: str = value_field("mean", choices=("mean", "cls", "last"))


@attrs.frozen
class LlamaConfig:
    """The local llama-server: where it listens, what it serves, how requests are sent.

    `url` set (in config.json or ATOMIC_AGENT_LLAMA_URL) means an externally run server;
    left empty, the runtime talks to the managed one on `host:port`.
    """

    url: str = value_field("", env=LLAMA_URL_ENV)
    host: str = value_field("127.0.0.1")
    port: int = int_field(DEFAULT_PORT, 1, 65535, env=LLAMA_PORT_ENV)
    model: str = value_field(STARTER_MODEL_ID)
    # "" = the binary `atomic-agent llama install` keeps in the cache
    binary: str = value_field("", env=LLAMA_BINARY_ENV)
    ctx_size: int = int_field(8192, 128, 4_194_304)
    # the managed server's --parallel: how many completions run at once, each in its own slot
    # with ctxSize / parallel tokens; every process on the machine shares these slots
    parallel: int = int_field(2, 1, 64)
    # a managed server gets at least two slots, so memory sub-calls (reflection, link
    # generator) ride their own slot and never evict a session's cached prefix
    reflection_slot: bool = value_field(True)
    threads: int = int_field(0, 0, 1024)  # 0: cores - 1, at least 1 (thread_count.chat_threads)
    # how long a completion waits for a free slot that no other process holds before it
    # lets the server choose (slot_leases.py)
    slot_wait_s: int = int_field(10, 0, 3600)
    completion_retries: int = int_field(3, 0, 20)
    completion_retry_backoff_ms: int = int_field(150, 0, 600_000)
    max_tokens: int = int_field(512, 1, 1_048_576)
    temperature: float = int_field(0.2, 0.0, 5.0)
    request_timeout_s: int = int_field(120, 1, 86_400)
    extra_args: tuple[str, ...] = value_field(())
    embeddings: EmbeddingDaemonConfig = attrs.field(factory=EmbeddingDaemonConfig)


def effective_llama_url(cfg: LlamaConfig, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(base url without trailing slash, mode): an explicit URL means "external", else "managed".

    The env var is consulted as well so a config built without env overrides still honours it.
    """
    env = os.environ if environ is None else environ
    explicit = (env.get(LLAMA_URL_ENV) or "").strip() or cfg.url.strip()
    if explicit:
        return explicit.rstrip("/"), MODE_EXTERNAL
    return loopback_url(cfg.host, cfg.port), MODE_MANAGED


def loopback_url(host: str, port: int) -> str:
    """`http://host:port` for a locally started server (an IPv6 literal gets brackets)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"
