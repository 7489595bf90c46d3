"""What makes one vendor CLI drivable: its argv, its output parser, its sign-in hint.

Every CLI-specific byte lives behind a descriptor; a new vendor CLI is a new descriptor
in `SUBSCRIPTION_CLIS`, never a new provider kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class CliOptions:
    model: str = ""
    stream: bool = False


@attrs.frozen
class CliAnswer:
    text: str
    usage: dict[str, Any] = attrs.field(factory=dict)
    is_error: bool = False
    error: str = ""


@attrs.frozen
class CliAdapterDescriptor:
    """`build_argv(executable, options)` never receives the prompt: it goes on stdin.
    `stream_delta(line)` turns one stdout line of a streaming run into answer text."""

    name: str
    executable: str
    build_argv: Callable[[str, CliOptions], list[str]]
    parse_output: Callable[[str], CliAnswer]
    stream_delta: Callable[[str], str] | None
    sign_in_hint: str
    auth_wording: tuple[str, ...] = ()
    rate_limit_wording: tuple[str, ...] = ("rate limit", "usage limit", "429", "too many requests")
    context_window: int | None = None
