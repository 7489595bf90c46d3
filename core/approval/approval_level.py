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

from atomic_agent.approval.approval_gate import ApprovalGate, check_level
from atomic_agent.config.config_file import config_path, read_raw_config, save_raw_config
from atomic_agent.config.config_keys import set_key

LEVEL_KEY = "agent.approvalLevel"


class ApprovalLevelError(RuntimeError):
    """The level was persisted but could not be applied to the running gate."""


def parse_level(value: object) -> int:
    """One of the integers 1..5 (a CLI may pass it as the digits "1".."5"); anything else —
    2.5, 0, 9, true, "high" — is refused with a ValueError naming the ladder, never clamped."""
    if isinstance(value, str) and value.strip().isdigit():
        return check_level(int(value.strip()))
    return check_level(value)


def resolve_boot_level(no_approval: bool, configured: int) -> int:
    """The level a process starts at: the persisted one, or 5 for `--no-approval` (never stricter)."""
    return 5 if no_approval else check_level(configured)


def set_approval_level(state_dir: Path, config_blocks: Mapping[str, Any], gate: ApprovalGate, level: object) -> int:
    """Persist `level` (an integer 1..5, else ValueError) to config.json, then apply it to `gate`; returns the level."""
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
