"""The subscription-cli plugin: a flat-rate subscription (a signed-in `claude` or `codex`
CLI) as an LLM provider. One kind; each vendor CLI is a descriptor.

Only hookimpls live here; the runner and descriptors load when a provider is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ProviderKind, RuntimeView

KIND = "subscription-cli"


@hookimpl
def register_providers() -> Iterable[ProviderKind]:
    from atomic_agent.api import ProviderCapabilities, ProviderKind

    return [ProviderKind(name=KIND, factory=_build, capabilities=ProviderCapabilities(transport="native_tools"),
                         summary="A signed-in vendor CLI (claude, codex) in its headless mode; "
                                 "uses the CLI's own sign-in, never its tokens.")]


def _build(entry: dict[str, Any], runtime: RuntimeView) -> Any:
    from .cli_provider import build_cli_provider

    return build_cli_provider(entry, runtime)
