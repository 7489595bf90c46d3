"""Which approval category a file-system mutation asks under.

Scope comes from canonical paths only: `workspace` when the target stays under the
canonical session cwd, `home` under the canonical home dir, `outside` otherwise, and
`unresolved` when the target cannot be placed (link loop). The agent's trust surface
(its config.json, .env and approval audit log) maps to `trust_config` by canonical match,
so a symlink, a `..` detour or a file that does not exist yet is still caught.

Persistence spots (any `.git` directory, shell rc and alias files, git config, Python
start-up hooks, autostart and cron, `.ssh`, the state dir's templates and skills — see
`persistence_spots`) never count as workspace or home, wherever they are: they ask under
`persistence` at every level below 5, checked on the path as given and on where it lands
(a `.git` that is a symlink still names a repository).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from atomic_agent.plugins.os.fs_approval.canonical_target import canonicalize_target, is_within
from atomic_agent.plugins.os.fs_approval.persistence_spots import persistence_reason
from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_root_of, secret_roots

WRITE, TRASH, EXTRACT = "write", "trash", "extract"
KINDS = (WRITE, TRASH, EXTRACT)

WORKSPACE_CATEGORY = "fs_write_workspace"
HOME_CATEGORY = "fs_write_home"
TRASH_CATEGORY = "fs_trash"
TRUST_CATEGORY = "trust_config"
OTHER_CATEGORY = "other"
PERSISTENCE_CATEGORY = "persistence"

# most restrictive last: a multi-target request asks under its strictest target
_RANK = {WORKSPACE_CATEGORY: 0, TRASH_CATEGORY: 1, HOME_CATEGORY: 2, OTHER_CATEGORY: 3, PERSISTENCE_CATEGORY: 4,
         TRUST_CATEGORY: 5}


@attrs.frozen
class TargetScope:
    requested: str
    canonical: Path | None
    scope: str  # "workspace" | "home" | "outside" | "persistence" | "trust_config" | "unresolved"
    category: str
    reason: str = ""  # why a persistence spot is one


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


def _scope_of(canon: Path | None, kind: str, workspace: Path | None, home: Path | None,
              trust: Sequence[Path], persistence: str | None, secrets: Sequence[str] = ()) -> str:
    if canon is None:
        return "unresolved"
    if kind == TRASH and any(is_within(t, canon) for t in trust):
        return "trust_config"  # trashing a directory that holds the trust files
    if canon in trust or secret_root_of(canon, secrets) is not None:
        return "trust_config"  # the operator token, audit log, leases: control of the runtime
    if persistence is not None and kind != TRASH:  # moving a hook away plants nothing
        return "persistence"
    if workspace is not None and is_within(canon, workspace):
        return "workspace"
    if home is not None and is_within(canon, home):
        return "home"
    return "outside"


def _category(scope: str, kind: str) -> str:
    if scope == "trust_config":
        return TRUST_CATEGORY
    if scope == "persistence":
        return PERSISTENCE_CATEGORY
    if scope in ("outside", "unresolved"):
        return OTHER_CATEGORY
    if kind == TRASH:
        return TRASH_CATEGORY
    if kind == EXTRACT:
        return HOME_CATEGORY  # extraction writes many files: never silent at the workspace level
    return WORKSPACE_CATEGORY if scope == "workspace" else HOME_CATEGORY


def _persistence(target: str | os.PathLike[str], canon: Path | None, state_dirs: Sequence[Path]) -> str | None:
    lexical = Path(os.path.abspath(os.fspath(target)))
    return persistence_reason(lexical, state_dirs) or (persistence_reason(canon, state_dirs) if canon else None)


def classify_fs_mutation(kind: str, targets: Sequence[str | os.PathLike[str]], working_dir: Path,
                         trust_config_paths: Sequence[Path] = (), home: Path | None = None,
                         state_dirs: Sequence[Path] = ()) -> FsClassification:
    """Classify every target of one mutation; the request asks under the strictest category.

    `state_dirs` are the agent's state dirs, whose templates and skills are persistence spots."""
    if kind not in KINDS:
        raise ValueError(f"fs mutation kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if not targets:
        raise ValueError("a file-system mutation needs at least one target")
    workspace = canonicalize_target(working_dir)
    home_root = canonicalize_target(home if home is not None else Path(os.path.expanduser("~")))
    trust = _canonical_roots(trust_config_paths)
    states = [*state_dirs, *_canonical_roots(state_dirs)]
    secrets = secret_roots(state_dirs)
    scoped = []
    for target in targets:
        canon = canonicalize_target(target)
        reason = _persistence(target, canon, states) if canon is not None else None
        scope = _scope_of(canon, kind, workspace, home_root, trust, reason, secrets)
        scoped.append(TargetScope(os.fspath(target), canon, scope, _category(scope, kind), reason or ""))
    strictest = max(scoped, key=lambda t: _RANK[t.category]).category
    return FsClassification(strictest, tuple(scoped))
