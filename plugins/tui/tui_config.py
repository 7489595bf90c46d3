"""The `tui` config block and the one place that persists a change to it.

`whileBusySubmit`: what Enter does while a turn runs — `steer` folds the text into the
running turn at its next step, `queue` keeps it for a turn of its own afterwards.
`mouse`: whether the app asks the terminal for mouse reports (clicks, wheel); with it off
the terminal keeps its own drag-to-select.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import config_file, read_raw_config, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

TUI_BLOCK = "tui"
SUBMIT_MODES = ("steer", "queue")
CONFIG_FILE = "config.json"  # the state dir's config file (`atomic-agent config set` writes the same file)


@attrs.frozen
class TuiConfig:
    while_busy_submit: str = value_field("steer", choices=SUBMIT_MODES)
    mouse: bool = value_field(True)


def tui_config(runtime: RuntimeView) -> TuiConfig:
    """The loaded block (defaults when the config predates it)."""
    try:
        block = runtime.config.block(TUI_BLOCK)
    except KeyError:
        return TuiConfig()
    return block if isinstance(block, TuiConfig) else TuiConfig()


def tui_config_of(config: Any) -> TuiConfig:
    """The block from an app config (the attached TUI has no runtime; defaults when absent)."""
    try:
        block = config.block(TUI_BLOCK)
    except (KeyError, AttributeError):
        return TuiConfig()
    return block if isinstance(block, TuiConfig) else TuiConfig()


def persist_tui_setting(runtime: RuntimeView, field: str, value: Any) -> Path:
    """Write `tui.<field>` to config.json (validated like `config set`); returns the file.
    Raises OSError (a read-only state dir) or ConfigError (a bad value) for the caller's notice."""
    path = Path(runtime.state_dir) / CONFIG_FILE
    raw = config_file.set_key(read_raw_config(path), f"{TUI_BLOCK}.{field}", value)
    config_file.save_raw_config(path, raw, runtime.config_blocks)
    return path
