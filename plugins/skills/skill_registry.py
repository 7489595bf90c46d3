"""Every skill on disk and which of them the agent sees.

Roots are searched in order: `<state>/skills` first, then the configured extra roots. Each
child directory holding a SKILL.md is one skill. A directory whose SKILL.md is broken, and a
second skill with a name already taken, are kept as problems (shown by `skill list` and
`doctor`), never half-loaded. `skills.disabled` filters `list()`: a disabled skill is gone
from the catalog and from skill.view, while its files stay where they are.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from .skill_manifest import SKILL_FILE, SkillFormatError, SkillManifest, read_manifest

SKILLS_DIR = "skills"
CATALOG_DESCRIPTION_CHARS = 160  # a catalog line stays short; skill.view has the whole description


class SkillNotFoundError(LookupError):
    pass


@attrs.frozen
class SkillProblem:
    where: str
    problem: str


@attrs.frozen
class SkillScan:
    skills: tuple[SkillManifest, ...]  # every readable skill, first of each name, sorted by name
    problems: tuple[SkillProblem, ...]


def state_skills_dir(state_dir: Path) -> Path:
    return state_dir / SKILLS_DIR


def scan_roots(roots: Sequence[Path]) -> SkillScan:
    found: dict[str, SkillManifest] = {}
    problems: list[SkillProblem] = []
    for root in roots:
        try:
            children = sorted(p for p in root.iterdir() if not p.name.startswith("."))
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(SkillProblem(str(root), f"cannot be listed ({exc.strerror or exc})"))
            continue
        for child in children:
            if not child.is_dir() or not (child / SKILL_FILE).exists():
                continue
            try:
                manifest = read_manifest(child)
            except SkillFormatError as exc:
                problems.append(SkillProblem(str(child), str(exc)))
                continue
            first = found.get(manifest.name)
            if first is not None:
                problems.append(SkillProblem(str(child), f"duplicate skill name {manifest.name!r}: {first.directory} "
                                                         "is used; rename or remove one of them"))
                continue
            found[manifest.name] = manifest
    return SkillScan(tuple(found[n] for n in sorted(found)), tuple(problems))


def catalog_line(skill: SkillManifest) -> str:
    description = skill.description
    if len(description) > CATALOG_DESCRIPTION_CHARS:
        description = description[:CATALOG_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"{skill.name}: {description}"


class SkillRegistry:
    """The skills of one state dir and config; rescans on every call (a handful of small files),
    so an install, an edit or a toggle shows without a restart."""

    def __init__(self, state_dir: Path, extra_roots: Iterable[str | Path] = (), disabled: Iterable[str] = ()) -> None:
        self.state_dir = state_dir
        self.roots = (state_skills_dir(state_dir), *(Path(r).expanduser() for r in extra_roots))
        self.disabled = frozenset(disabled)

    def scan(self) -> SkillScan:
        return scan_roots(self.roots)

    def list_all(self) -> builtins.list[SkillManifest]:
        """Every usable skill, disabled ones included."""
        return list(self.scan().skills)

    def list(self) -> list[SkillManifest]:
        """The enabled skills, sorted by name."""
        return [s for s in self.scan().skills if s.name not in self.disabled]

    def get(self, name: str) -> SkillManifest:
        for skill in self.list():
            if skill.name == name:
                return skill
        known = ", ".join(s.name for s in self.list()) or "none"
        raise SkillNotFoundError(f"no enabled skill named {name!r} (enabled skills: {known}); the ### skills list "
                                 "names them")

    def catalog_lines(self) -> builtins.list[str]:
        return [catalog_line(s) for s in self.list()]

    def catalog(self) -> builtins.list[dict[str, object]]:
        return [{"name": s.name, "description": s.description, "env": list(s.env), "scripts": list(s.scripts)}
                for s in self.list()]
