"""Read, change and write config.json's `llm` block from a command: every edit is checked
as a whole block (unknown ids, bad ladders, ...) before the file is written atomically."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from atomic_agent.api import ConfigError, config_file, current_cli_state, fail, read_raw_config


def load_llm_block(ctx: typer.Context) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """(boot context, whole raw config, the raw `llm` block inside it)."""
    boot = current_cli_state(ctx).require()
    try:
        raw = read_raw_config(boot.config.path)
    except ConfigError as exc:
        fail(str(exc))
    llm = raw.get("llm")
    if llm is None:
        llm = raw["llm"] = {}
    if not isinstance(llm, dict):
        fail(f"{boot.config.path}: `llm` must be an object; fix it by hand first")
    return boot, raw, llm


def save_llm_block(boot: Any, raw: dict[str, Any], llm: dict[str, Any]) -> Any:
    """Validate the edited block, then write the file; returns the structured LlmConfig."""
    from atomic_agent.api import llm_config

    try:
        checked = llm_config.structure_llm_block(llm, boot.config.path)
        raw["llm"] = llm
        config_file.save_raw_config(boot.config.path, raw, boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    return checked


def edit_llm_block(ctx: typer.Context, change: Callable[[dict[str, Any]], None]) -> Any:
    boot, raw, llm = load_llm_block(ctx)
    change(llm)
    return save_llm_block(boot, raw, llm)
