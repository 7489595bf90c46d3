"""The openai-compatible plugin: one provider kind for every OpenAI-style chat endpoint
(OpenRouter and the other vendor presets, local servers), and the `providers` commands.

Only hookimpls live here; httpx and everything else load inside the hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ProviderKind, RuntimeView, ServiceSpec

KIND = "openai-compatible"


@hookimpl
def register_providers() -> Iterable[ProviderKind]:
    from atomic_agent.api import ProviderCapabilities, ProviderKind

    return [ProviderKind(name=KIND, factory=_build,
                         capabilities=ProviderCapabilities(transport="native_tools", embeddings=True),
                         summary="Any OpenAI-compatible /chat/completions endpoint (OpenRouter, vendor presets, "
                                 "local servers), native tool calls.")]


def _build(entry: dict[str, Any], runtime: RuntimeView) -> Any:
    from .provider_factory import build_openai_provider

    return build_openai_provider(entry, runtime)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    import typer

    from .fallback_commands import fallback_app
    from .providers_commands import providers_app

    app.add_typer(providers_app, name="providers",
                  help="List, add, verify and choose LLM providers; search the model catalog; edit the fallback chain.")
    # `llm fallback ...` is the spelling the guide uses; it is the same validated sub-app
    llm_app = typer.Typer(no_args_is_help=True)
    llm_app.add_typer(fallback_app, name="fallback", help="Show and edit the provider fallback chain.")
    app.add_typer(llm_app, name="llm", help="LLM settings shared by every provider (the fallback chain).")


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec

    return [ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's Providers panel: cloud providers (key checked before saving), fallback chain")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .providers_panel import build_providers_panel  # Textual loads here, only when the TUI runs

        return build_providers_panel(context)

    return TuiPanel(name="providers", title="Providers", build=build, order=35)
