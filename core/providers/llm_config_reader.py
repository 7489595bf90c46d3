"""The effective `llm` block of a loaded config, registered as a block or not.

Until the block is registered with the config loader, config.json's `llm` arrives as an
unknown block kept verbatim; it is structured here with the same converter and the same
error shape, so both paths reject the same mistakes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.config.app_config import AppConfig
from atomic_agent.config.config_converter import describe_structure_error, lenient_converter, strict_converter
from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.providers.llm_config import LLM_BLOCK_KEY, LlmConfig


def structure_llm_block(raw: Any, path: Path | str | None = None, *, newer: bool = False) -> LlmConfig:
    """`raw` (the block as on disk) as an LlmConfig; any problem is a ConfigError."""
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(path, LLM_BLOCK_KEY, f"must be an object, found {type(raw).__name__}",
                          'Write it as "llm": { ... }, or remove it to use the local llama-server')
    converter = lenient_converter if newer else strict_converter
    try:
        return converter.structure(dict(raw), LlmConfig)
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
    return strict_converter.unstructure(llm)
