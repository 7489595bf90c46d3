"""The llama-server plugin: the local provider kind and the `llama` / `models` commands.

Only hookimpls live here. Everything they touch is imported inside the hooks so that
`atomic-agent --help` never pays for httpx, rich or platformdirs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, ProviderKind, RuntimeView, ServiceSpec


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .llama_config import LlamaConfig

    # threads defaulted to 2 (embedding daemon: 1) before 0 = auto (cores - 1)
    return [ConfigBlock(key="llama", cls=LlamaConfig, former_defaults={"threads": (2,), "embeddings.threads": (1,)})]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .llama_commands import llama_app
    from .models_commands import models_app

    app.add_typer(llama_app, name="llama", help="Install, start, stop and inspect the local llama-server.")
    app.add_typer(models_app, name="models", help="List, add, pull and choose local GGUF models.")


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from .server_status import build_findings, prompt_cache_findings

    return [*build_findings(), *prompt_cache_findings(state_dir)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec

    return [ServiceSpec(EMBEDDINGS_SERVICE, _managed_embeddings, close=_close_embeddings,
                        summary="the managed embedding daemon's client (None when llama.embeddings is off)"),
            ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's Models panel: llama-server start/stop, local models list/use/pull")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .models_panel import build_models_panel  # Textual loads here, only when the TUI runs

        return build_models_panel(context)

    return TuiPanel(name="models", title="Models", build=build, order=30)


EMBEDDINGS_SERVICE = "llama_embeddings"


def _managed_embeddings(runtime: RuntimeView) -> Any:
    """An embedding provider for the daemon `llama start` runs beside the chat server, or
    None when `llama.embeddings.enabled` is false (no client is built against an absent daemon)."""
    cfg = runtime.config.block("llama")
    if not cfg.embeddings.enabled:
        return None
    from .llama_embeddings import LlamaEmbeddingProvider
    from .server_status import embedding_daemon_url

    provider = LlamaEmbeddingProvider(embedding_daemon_url(cfg, runtime.state_dir), provider_id="llama-embeddings")
    provider.model_id = cfg.embeddings.model  # names the vectors, so a model change re-embeds
    return provider


async def _close_embeddings(provider: Any) -> None:
    if provider is not None:
        await provider.close()


@hookimpl
def register_providers() -> Iterable[ProviderKind]:
    from atomic_agent.api import ProviderCapabilities, ProviderKind

    return [ProviderKind(name="llama-server", factory=_local_provider,
                         capabilities=ProviderCapabilities(transport="grammar", slot_affinity=True),
                         summary="A local llama.cpp llama-server over HTTP (GBNF tool calls, KV-cache slots).",
                         default_local=True),
            ProviderKind(name="llama-server-embeddings", factory=_embedding_provider,
                         capabilities=ProviderCapabilities(transport="grammar", embeddings=True),
                         summary="Vectors from a llama-server started with --embeddings (its /embedding route).")]


def _embedding_provider(entry: dict[str, Any], runtime: RuntimeView) -> Any:
    from .llama_embeddings import build_llama_embedding_provider

    return build_llama_embedding_provider(entry, runtime)


def _local_provider(entry: dict[str, Any], runtime: RuntimeView) -> Any:
    """Fill an entry from the `llama` block (url/mode, retries, limits) where it is silent."""
    from .llama_config import effective_llama_url
    from .llama_provider import build_llama_provider

    cfg = runtime.config.block("llama")
    url, mode = effective_llama_url(cfg)
    filled = {"url": url, "mode": mode, "retries": cfg.completion_retries,
              "backoffMs": cfg.completion_retry_backoff_ms, "timeoutS": cfg.request_timeout_s,
              "maxTokens": cfg.max_tokens, "slotWaitS": cfg.slot_wait_s, **{k: v for k, v in entry.items() if k not in ("id", "kind")}}
    provider = build_llama_provider(filled, runtime)
    provider.temperature = cfg.temperature
    return provider
