"""Changing the standing approval level: validate, persist to config.json, then hot-apply.

The level is a machine-local trust posture. It is written to `agent.approvalLevel` first,
so the next boot picks it up, and only then applied to the live gate; if applying fails
after the write, the error names the already-rewritten file. `--no-approval` forces level
5 for one process and is never persisted.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.approval.approval_gate import ApprovalGate, clamp_level
from atomic_agent.config.config_file import config_path, read_raw_config, save_raw_config
from atomic_agent.config.config_keys import set_key

LEVEL_KEY = "agent.approvalLevel"


class ApprovalLevelError(RuntimeError):
    """The level was persisted but could not be applied to the running gate."""


def parse_level(value: object) -> int:
    """An integer level clamped to 1..5; anything that is not an integer is refused."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return clamp_level(int(value.strip()))
        raise ValueError(f"approval level must be an integer 1..5, got {value!r}; "
                         "1 paranoid, 2 workspace, 3 home, 4 operator, 5 full trust")
    return clamp_level(value)


def resolve_boot_level(no_approval: bool, configured: int) -> int:
    """The level a process starts at: the persisted one, or 5 for `--no-approval` (never stricter)."""
    return 5 if no_approval else clamp_level(configured)


def set_approval_level(state_dir: Path, config_blocks: Mapping[str, Any], gate: ApprovalGate, level: object) -> int:
    """Persist `level` (clamped) to config.json, then apply it to `gate`; returns the level."""
    value = parse_level(level)
    path = config_path(state_dir)
    raw = set_key(read_raw_config(path), LEVEL_KEY, value)
    save_raw_config(path, raw, config_blocks)
    try:
        return gate.set_level(value)
    except Exception as exc:
        raise ApprovalLevelError(
            f"{path} now says {LEVEL_KEY}={value} (the next start uses it), but the running gate could not "
            f"be switched ({type(exc).__name__}: {exc}); restart to apply it") from exc
