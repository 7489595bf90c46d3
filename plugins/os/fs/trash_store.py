"""The agent's trash: `<state>/trash/<id>/` holds the moved item and a `meta.json` saying
where it came from, so every trash is restorable (until someone empties the folder)."""

from __future__ import annotations

import json
import os
import secrets
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

TRASH_DIR = "trash"
ITEM = "item"
META = "meta.json"


class TrashError(ValueError):
    pass


def trash_root(state_dir: Path) -> Path:
    return state_dir / TRASH_DIR


class TrashStore:
    def __init__(self, state_dir: Path) -> None:
        self.root = trash_root(state_dir)

    def move_in(self, canonical: Path) -> dict[str, Any]:
        if not os.path.lexists(canonical):
            raise TrashError(f"{canonical} does not exist")
        root = Path(os.path.realpath(self.root))
        if os.path.commonpath([str(root), str(canonical)]) == str(canonical):
            raise TrashError(f"{canonical} contains the trash itself; it cannot be moved into it")
        entry_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        entry = self.root / entry_id
        entry.mkdir(parents=True, mode=0o700)
        is_dir = canonical.is_dir() and not canonical.is_symlink()
        meta = {"id": entry_id, "original": str(canonical), "trashedAt": datetime.now(timezone.utc).isoformat(),
                "kind": "dir" if is_dir else "file"}
        (entry / META).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        try:
            shutil.move(str(canonical), str(entry / ITEM))
        except BaseException:
            shutil.rmtree(entry, ignore_errors=True)
            raise
        return meta

    def entries(self) -> list[dict[str, Any]]:
        if not self.root.is_dir():
            return []
        out = []
        for entry in sorted(self.root.iterdir(), reverse=True):
            try:
                out.append(json.loads((entry / META).read_text(encoding="utf-8")))
            except (OSError, json.JSONDecodeError):
                continue
        return out

    def meta(self, entry_id: str) -> dict[str, Any]:
        if not entry_id or "/" in entry_id or entry_id.startswith("."):
            raise TrashError(f"{entry_id!r} is not a trash id; action=list shows them")
        try:
            return json.loads((self.root / entry_id / META).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            raise TrashError(f"no trash entry {entry_id!r}; action=list shows them") from None

    def restore(self, entry_id: str, destination: Path) -> None:
        item = self.root / entry_id / ITEM
        if os.path.lexists(destination):
            raise TrashError(f"{destination} exists again; move it away first, nothing was restored")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(item), str(destination))
        shutil.rmtree(self.root / entry_id, ignore_errors=True)
