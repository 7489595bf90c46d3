"""The agent's own trust surface inside its state dir.

`config.json` holds `agent.approvalLevel`, `.env` the API keys and bot tokens loaded at
boot, and the audit log records every approval: a silent write to any of them would let
the model raise its own trust, swap a token or erase its tracks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from atomic_agent.api import approval_gate

CONFIG_FILE = "config.json"
DOTENV_FILE = ".env"


def trust_config_paths(*state_dirs: Path | None) -> tuple[Path, ...]:
    """The trust files of every given state dir (duplicates removed, order kept)."""
    seen: dict[str, Path] = {}
    for state_dir in state_dirs:
        if state_dir is None:
            continue
        for path in (state_dir / CONFIG_FILE, state_dir / DOTENV_FILE, approval_gate.audit_path(state_dir)):
            seen.setdefault(str(path), path)
    return tuple(seen.values())


def is_secret_file(canonical: Path, trust: Iterable[Path]) -> bool:
    """True for the `.env` of a state dir: tools may not read it into the model's context."""
    from atomic_agent.plugins.os.fs_approval.canonical_target import canonicalize_target

    return any(p.name == DOTENV_FILE and canonicalize_target(p) == canonical for p in trust)
