"""The `llm` config block: configured providers, the active ones, tool transport, fallback.

Provider entries stay free-form mappings: each provider kind reads (and checks) its own
keys, so a kind added by a plugin never needs a change here. What is checked here is
what every entry shares (`id`, `kind`) and every cross-reference between ids.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.config.config_converter import describe_structure_error, strict_converter, structure_block
from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_fields import int_field, value_field
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.hook_records import ConfigBlock

# The effective `llm` block of a loaded config, registered as a block or not.
#
# Until the block is registered with the config loader, config.json's `llm` arrives as an
# unknown block kept verbatim; it is structured here with the same converter and the same
# error shape, so both paths reject the same mistakes.

def structure_llm_block(raw: Any, path: Path | str | None = None, *, newer: bool = False) -> LlmConfig:
    """`raw` (the block as on disk) as an LlmConfig; any problem is a ConfigError."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(path, LLM_BLOCK_KEY, f"must be an object, found {type(raw).__name__}",
                          'Write it as "llm": { ... }, or remove it to use the local llama-server')
    try:
        return structure_block(dict(raw), LlmConfig, newer=newer)
    except Exception as exc:  # cattrs and the attrs validators both land here
        location, problem = describe_structure_error(exc, LLM_BLOCK_KEY)
        raise ConfigError(path, location, problem,
                          "Fix the value (see `atomic-agent providers list`), or remove it") from None


def read_llm_config(config: AppConfig) -> LlmConfig:
    block = config.blocks.get(LLM_BLOCK_KEY)
    if isinstance(block, LlmConfig):
        return block
    return structure_llm_block(config.unknown_blocks.get(LLM_BLOCK_KEY), config.path,
                               newer=config.version > CONFIG_VERSION)


def unstructure_llm_block(llm: LlmConfig) -> dict[str, Any]:
    block: dict[str, Any] = strict_converter.unstructure(llm)
    return block


TRANSPORT_AUTO = "auto"
TRANSPORT_GRAMMAR = "grammar"
TRANSPORT_NATIVE = "native_tools"
TOOL_TRANSPORTS = (TRANSPORT_AUTO, TRANSPORT_GRAMMAR, TRANSPORT_NATIVE)
DEFAULT_COOLDOWN_MS = (30_000, 60_000, 300_000)
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,99}$")
_DAY_MS = 86_400_000


def _check_ladder(_inst: object, _attr: attrs.Attribute[tuple[int, ...]], value: tuple[int, ...]) -> None:
    if not value:
        raise ValueError("fallback.cooldownMs must be a non-empty list of milliseconds, e.g. [30000, 60000, 300000]")
    for step in value:
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= 7 * _DAY_MS:
            raise ValueError(f"fallback.cooldownMs must be whole milliseconds in 0..{7 * _DAY_MS}; got {step!r}")
    # "escalating" has to stay true: a later step may never be shorter than an earlier one
    for earlier, later in itertools.pairwise(value):
        if later < earlier:
            raise ValueError(f"fallback.cooldownMs must be non-decreasing (each step at least the one before); "
                             f"{later} follows {earlier} in {list(value)}")


def _int_tuple(value: Any) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"fallback.cooldownMs must be a list of milliseconds; got {value!r}")
    return tuple(value)


@attrs.frozen
class FallbackConfig:
    """`llm.fallback`: the ordered provider ids the chain may fail over to, and its timing."""

    chain: tuple[str, ...] = value_field(())
    append_local: bool = value_field(True)
    failure_threshold: int = int_field(3, 1, 1000)
    cooldown_ms: tuple[int, ...] = attrs.field(default=DEFAULT_COOLDOWN_MS, converter=_int_tuple,
                                               validator=_check_ladder)
    probe_throttle_ms: int = int_field(300_000, 0, 7 * _DAY_MS)
    failure_window_ms: int = int_field(_DAY_MS, 1000, 365 * _DAY_MS)


def _check_entries(_inst: object, _attr: attrs.Attribute[Any], value: tuple[dict[str, Any], ...]) -> None:
    seen: set[str] = set()
    for index, entry in enumerate(value):
        if not isinstance(entry, dict):
            raise ValueError(f"providers must be a list of objects; item {index} is {type(entry).__name__}")
        pid, kind = entry.get("id"), entry.get("kind")
        if not isinstance(pid, str) or not _ID.match(pid):
            raise ValueError(f"providers must be entries with an `id` of letters, digits and ._@:- "
                             f"(item {index} has {pid!r})")
        if not isinstance(kind, str) or not kind.strip():
            raise ValueError(f"providers must be entries with a `kind` such as \"openai-compatible\" "
                             f"(entry {pid!r} has {kind!r})")
        if pid in seen:
            raise ValueError(f"providers must be entries with distinct ids; {pid!r} appears twice")
        seen.add(pid)


def _entries(value: Any) -> tuple[dict[str, Any], ...]:
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise ValueError(f"providers must be a list of provider objects; got {type(value).__name__}")
    return tuple(dict(v) if isinstance(v, dict) else v for v in value)


@attrs.frozen
class LlmConfig:
    """`llm`: which providers exist and which serve text and embeddings.

    With `providers` empty a local llama-server entry is synthesised, so an install that
    never configures a provider behaves exactly as a local-only one.
    """

    providers: tuple[dict[str, Any], ...] = attrs.field(factory=tuple, converter=_entries, validator=_check_entries)
    active_text_provider: str = value_field("")
    active_embedding_provider: str = value_field("")
    tool_transport: str = value_field(TRANSPORT_AUTO, choices=TOOL_TRANSPORTS)
    cost_tracking: bool = value_field(True)
    fallback: FallbackConfig = attrs.field(factory=FallbackConfig)

    def __attrs_post_init__(self) -> None:
        ids = [e["id"] for e in self.providers]
        known = ", ".join(ids) or "none"
        if self.active_text_provider and self.active_text_provider not in ids:
            raise ValueError(f"activeTextProvider must be the id of an entry in llm.providers (configured: {known}); "
                             f"got {self.active_text_provider!r}")
        if self.active_embedding_provider and self.active_embedding_provider not in ids:
            raise ValueError(f"activeEmbeddingProvider must be the id of an entry in llm.providers "
                             f"(configured: {known}); got {self.active_embedding_provider!r}")
        unknown = [pid for pid in self.fallback.chain if pid not in ids]
        if unknown:
            raise ValueError(f"fallback.chain must be configured provider ids only (configured: {known}); "
                             f"unknown: {', '.join(unknown)}")

    def entry(self, provider_id: str) -> dict[str, Any] | None:
        for entry in self.providers:
            if entry["id"] == provider_id:
                return dict(entry)
        return None


LLM_BLOCK_KEY = "llm"
LLM_CONFIG_BLOCK = ConfigBlock(key=LLM_BLOCK_KEY, cls=LlmConfig, plugin="core")
