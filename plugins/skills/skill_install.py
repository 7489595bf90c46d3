"""Install a skill from a local directory or archive into `<state>/skills`, and remove one.

Nothing is fetched from a network. A directory is copied (symlinks and special files are
refused: a link could point a script anywhere); an archive is unpacked by the os plugin's
`archives` service, whose guards refuse `..` and absolute names, link entries and bombs.
Either way the skill is checked (its SKILL.md parsed) in a staging directory before it is
moved into place, and its provenance (source, sha256, kind, time) is recorded in
`<state>/skills/.provenance.json`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from .skill_manifest import SKILL_FILE, SkillFormatError, SkillManifest, read_manifest
from .skill_registry import state_skills_dir

PROVENANCE_FILE = ".provenance.json"
MAX_SKILL_BYTES = 50 << 20
MAX_SKILL_FILES = 2000


class SkillInstallError(ValueError):
    pass


def _walk_files(root: Path) -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in [*dirnames, *sorted(filenames)]:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise SkillInstallError(f"{path} is a symlink; a skill to install holds only plain files and "
                                        "directories (copy the target in instead)")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise SkillInstallError(f"{path} is a special file; refused")
            if stat.S_ISREG(mode):
                files.append(path)
    return files


def tree_digest(root: Path) -> str:
    """sha256 over every file's relative path and content, in path order."""
    digest = hashlib.sha256()
    for path in sorted(_walk_files(root)):
        digest.update(path.relative_to(root).as_posix().encode("utf-8", "surrogateescape") + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _skill_root_in(staged: Path) -> Path:
    """The staged tree's skill directory: the top itself, or its only subdirectory."""
    if (staged / SKILL_FILE).is_file():
        return staged
    children = [p for p in staged.iterdir() if not p.name.startswith(".")]
    if len(children) == 1 and children[0].is_dir() and (children[0] / SKILL_FILE).is_file():
        return children[0]
    raise SkillInstallError(f"no {SKILL_FILE} at the top of the source or in its only directory; a skill is a "
                            f"directory holding a {SKILL_FILE}")


def read_provenance(state_dir: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((state_skills_dir(state_dir) / PROVENANCE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def _write_provenance(state_dir: Path, records: dict[str, dict[str, str]]) -> None:
    from atomic_agent.api import write_atomic

    write_atomic(state_skills_dir(state_dir) / PROVENANCE_FILE, json.dumps(records, indent=2, sort_keys=True) + "\n",
                 mode=0o644)


def install_skill(state_dir: Path, source: Path, unpack: Callable[[Path, Path, int], object] | None,
                  replace: bool = False) -> tuple[SkillManifest, dict[str, str]]:
    """Install `source` (a directory, or an archive `unpack(archive, dest, max_bytes)` can
    open); returns the installed skill and its provenance record."""
    source = source.expanduser()
    if not source.exists():
        raise SkillInstallError(f"{source} does not exist; give a skill directory or an archive of one "
                                "(installs are local only)")
    root = state_skills_dir(state_dir)
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".install-", dir=root))
    try:
        staged = staging / "tree"
        if source.is_dir():
            files = _walk_files(source)
            kind, digest = "directory", tree_digest(source)
            if len(files) > MAX_SKILL_FILES or sum(f.stat().st_size for f in files) > MAX_SKILL_BYTES:
                raise SkillInstallError(f"{source} holds over {MAX_SKILL_FILES} files or {MAX_SKILL_BYTES >> 20} MiB; "
                                        "not a skill")
            shutil.copytree(source, staged, symlinks=True)
        elif source.is_file():
            if unpack is None:
                raise SkillInstallError("installing from an archive needs the os plugin (its archive guards)")
            kind, digest = "archive", file_sha256(source)
            try:
                unpack(source, staged, MAX_SKILL_BYTES)
            except ValueError as exc:
                raise SkillInstallError(f"{source.name}: {exc}") from None
        else:
            raise SkillInstallError(f"{source} is neither a directory nor a file")
        skill_dir = _skill_root_in(staged)
        _walk_files(skill_dir)
        try:
            manifest = read_manifest(skill_dir)
        except SkillFormatError as exc:
            raise SkillInstallError(f"not installed: {exc}") from None
        target = root / manifest.name
        if target.exists() and not replace:
            raise SkillInstallError(f"a skill named {manifest.name!r} is already installed at {target}; remove it "
                                    "first or pass --replace")
        if target.exists():
            shutil.rmtree(target)
        os.replace(skill_dir, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    record = {"source": str(source.resolve()), "kind": kind, "sha256": digest,
              "installedAt": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    records = read_provenance(state_dir)
    records[manifest.name] = record
    _write_provenance(state_dir, records)
    return read_manifest(target), record


def remove_skill(state_dir: Path, skill: SkillManifest) -> Path:
    """Delete an installed skill's directory (only under `<state>/skills`) and its provenance."""
    root = Path(os.path.realpath(state_skills_dir(state_dir)))
    directory = Path(os.path.realpath(skill.directory))
    if directory.parent != root:
        raise SkillInstallError(f"skill {skill.name!r} lives in {skill.directory}, a configured extra root; remove it "
                                "there, or disable it with `atomic-agent skill disable`")
    shutil.rmtree(directory)
    records = read_provenance(state_dir)
    if records.pop(skill.name, None) is not None:
        _write_provenance(state_dir, records)
    return directory
