"""Seed the starter skills into `<state>/skills`, once each.

A starter is copied only when it was never seeded before (the names already seeded are kept
in `<state>/skills/.seeded`), so seeding again changes nothing: an edited starter keeps its
edits, a disabled one stays disabled, and one the user removed stays removed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .skill_registry import state_skills_dir

STARTERS_DIR = Path(__file__).resolve().parent / "starters"
SEEDED_FILE = ".seeded"


def starter_names() -> list[str]:
    return sorted(p.name for p in STARTERS_DIR.iterdir() if (p / "SKILL.md").is_file())


def _seeded(path: Path) -> list[str]:
    try:
        names = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def seed_starter_skills(state_dir: Path) -> list[str]:
    """Copy the starters not seeded before; returns the names copied now."""
    from atomic_agent.api import write_atomic

    root = state_skills_dir(state_dir)
    marker = root / SEEDED_FILE
    done = _seeded(marker)
    todo = [n for n in starter_names() if n not in done]
    if not todo:
        return []
    root.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in todo:
        target = root / name
        if not target.exists():
            shutil.copytree(STARTERS_DIR / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            copied.append(name)
    write_atomic(marker, json.dumps(sorted({*done, *todo})) + "\n", mode=0o644)
    return copied
