"""What the `llama` and `models` commands read from the CLI state."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import current_cli_state

if TYPE_CHECKING:
    import typer

    from .llama_config import LlamaConfig

LLAMA_BLOCK = "llama"
VISION_BLOCK = "vision"


def llama_settings(ctx: typer.Context) -> tuple[LlamaConfig, Path]:
    """(the effective `llama` block, the state dir) of the running command."""
    config = current_cli_state(ctx).config
    return config.block(LLAMA_BLOCK), config.state_dir


def vision_enabled(config: Any) -> bool:
    """Whether a managed start loads the model's projector: the vision plugin's block is there
    and `vision.enabled` is on (without the plugin nothing would use the images)."""
    block = config.blocks.get(VISION_BLOCK)
    return bool(block is not None and getattr(block, "enabled", False))
