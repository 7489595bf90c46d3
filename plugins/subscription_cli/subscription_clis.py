"""The vendor CLIs the subscription-cli kind can drive, by the name an entry uses."""

from __future__ import annotations

from .claude_descriptor import CLAUDE
from .cli_descriptor import CliAdapterDescriptor
from .codex_descriptor import CODEX

SUBSCRIPTION_CLIS: dict[str, CliAdapterDescriptor] = {d.name: d for d in (CLAUDE, CODEX)}


def cli_named(name: str) -> CliAdapterDescriptor:
    try:
        return SUBSCRIPTION_CLIS[name]
    except KeyError:
        raise ValueError(f"unknown subscription CLI {name!r}; supported: {', '.join(SUBSCRIPTION_CLIS)}") from None
