"""Which approval category a file-system mutation asks under.

Scope comes from canonical paths only: `workspace` when the target stays under the
canonical session cwd, `home` under the canonical home dir, `outside` otherwise, and
`unresolved` when the target cannot be placed (link loop). The agent's trust surface
(its config.json, .env and approval audit log) maps to `trust_config` by canonical match,
so a symlink, a `..` detour or a file that does not exist yet is still caught.

Beyond the guide: a few persistence spots never count as workspace or home — `.git/`
internals (hooks run on the next commit) and shell start-up files, `~/.ssh` and autostart
dirs — they ask as `other` below full trust.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from atomic_agent.plugins.os.fs_approval.canonical_target import canonicalize_target, is_within

WRITE, TRASH, EXTRACT = "write", "trash", "extract"
KINDS = (WRITE, TRASH, EXTRACT)

WORKSPACE_CATEGORY = "fs_write_workspace"
HOME_CATEGORY = "fs_write_home"
TRASH_CATEGORY = "fs_trash"
TRUST_CATEGORY = "trust_config"
OTHER_CATEGORY = "other"

# most restrictive last: a multi-target request asks under its strictest target
_RANK = {WORKSPACE_CATEGORY: 0, TRASH_CATEGORY: 1, HOME_CATEGORY: 2, OTHER_CATEGORY: 3, TRUST_CATEGORY: 4}

PERSISTENCE_IN_HOME = (".ssh", ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
                       ".zprofile", ".zshenv", ".zlogin", ".config/autostart", ".config/systemd",
                       ".config/fish/config.fish", ".pam_environment", ".xprofile", ".xinitrc")
GIT_INTERNALS = ".git"


@attrs.frozen
class TargetScope:
    requested: str
    canonical: Path | None
    scope: str  # "workspace" | "home" | "outside" | "trust_config" | "unresolved"
    category: str


@attrs.frozen
class FsClassification:
    category: str
    targets: tuple[TargetScope, ...]

    @property
    def canonical(self) -> tuple[Path | None, ...]:
        return tuple(t.canonical for t in self.targets)


def _canonical_roots(paths: Iterable[Path]) -> list[Path]:
    roots = []
    for path in paths:
        canon = canonicalize_target(path)
        if canon is not None:
            roots.append(canon)
    return roots


def _persistence_spot(canon: Path, workspace: Path | None, home: Path | None) -> bool:
    if workspace is not None and is_within(canon, workspace / GIT_INTERNALS):
        return True
    if home is not None:
        return any(is_within(canon, home / rel) for rel in PERSISTENCE_IN_HOME)
    return False


def _scope_of(canon: Path | None, kind: str, workspace: Path | None, home: Path | None,
              trust: Sequence[Path]) -> str:
    if canon is None:
        return "unresolved"
    if kind == TRASH and any(is_within(t, canon) for t in trust):
        return "trust_config"  # trashing a directory that holds the trust files
    if canon in trust:
        return "trust_config"
    if _persistence_spot(canon, workspace, home):
        return "outside"
    if workspace is not None and is_within(canon, workspace):
        return "workspace"
    if home is not None and is_within(canon, home):
        return "home"
    return "outside"


def _category(scope: str, kind: str) -> str:
    if scope == "trust_config":
        return TRUST_CATEGORY
    if scope in ("outside", "unresolved"):
        return OTHER_CATEGORY
    if kind == TRASH:
        return TRASH_CATEGORY
    if kind == EXTRACT:
        return HOME_CATEGORY  # extraction writes many files: never silent at the workspace level
    return WORKSPACE_CATEGORY if scope == "workspace" else HOME_CATEGORY


def classify_fs_mutation(kind: str, targets: Sequence[str | os.PathLike[str]], working_dir: Path,
                         trust_config_paths: Sequence[Path] = (), home: Path | None = None) -> FsClassification:
    """Classify every target of one mutation; the request asks under the strictest category."""
    if kind not in KINDS:
        raise ValueError(f"fs mutation kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not targets:
        raise ValueError("a file-system mutation needs at least one target")
    workspace = canonicalize_target(working_dir)
    home_root = canonicalize_target(home if home is not None else Path(os.path.expanduser("~")))
    trust = _canonical_roots(trust_config_paths)
    scoped = []
    for target in targets:
        canon = canonicalize_target(target)
        scope = _scope_of(canon, kind, workspace, home_root, trust)
        scoped.append(TargetScope(os.fspath(target), canon, scope, _category(scope, kind)))
    strictest = max(scoped, key=lambda t: _RANK[t.category]).category
    return FsClassification(strictest, tuple(scoped))
