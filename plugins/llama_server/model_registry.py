"""The local models registry, `<state>/llamacpp/models.json`: id -> GGUF file.

The starter model is always listed (it lives in the cache, not in the file), so a fresh
state dir already has a default. Writes go through `write_atomic`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import write_atomic

from .cache_locations import llamacpp_state_dir
from .gguf_file import has_gguf_magic
from .llama_errors import ModelMissingError, ModelRegistryError
from .starter_model import STARTER_MODEL_ID, STARTER_SHA256, STARTER_SIZE, starter_model_path

REGISTRY_FILE = "models.json"
REGISTRY_VERSION = 1
SOURCE_STARTER = "starter"
SOURCE_ADDED = "added"
SOURCE_PULLED = "pulled"

_ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


@attrs.frozen
class ModelEntry:
    id: str
    path: str
    source: str  # starter | added | pulled
    sha256: str = ""
    size_bytes: int = 0
    url: str = ""
    mmproj: str = ""  # the vision projector GGUF beside the model ("" = text only)

    def present(self) -> bool:
        return Path(self.path).is_file()

    def projector(self) -> Path | None:
        """The projector file when one is registered and still on disk."""
        return Path(self.mmproj) if self.mmproj and Path(self.mmproj).is_file() else None

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"id": self.id, "path": self.path, "source": self.source, "sha256": self.sha256,
                                "sizeBytes": self.size_bytes, "url": self.url}
        if self.mmproj:  # written only when set, so text-only registries stay byte-identical
            body["mmproj"] = self.mmproj
        return body


def registry_path(state_dir: Path) -> Path:
    return llamacpp_state_dir(state_dir) / REGISTRY_FILE


def starter_entry(cache: Path) -> ModelEntry:
    return ModelEntry(id=STARTER_MODEL_ID, path=str(starter_model_path(cache)), source=SOURCE_STARTER,
                      sha256=STARTER_SHA256, size_bytes=STARTER_SIZE)


def validate_model_id(text: str) -> str:
    if not _ID.match(text):
        raise ModelRegistryError(f"{text!r} is not a valid model id. Use 1-80 characters: lower-case letters, "
                                 "digits, '.', '_' or '-', starting with a letter or digit (e.g. qwen2.5-0.5b-q4).")
    return text


def default_model_id(path: Path) -> str:
    """A model id derived from a file name: `Qwen2.5-0.5B.Q4_K_M.gguf` -> `qwen2.5-0.5b.q4_k_m`."""
    stem = path.name[:-5] if path.name.lower().endswith(".gguf") else path.name
    slug = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")
    return (slug or "model")[:80]


def stored_models(state_dir: Path) -> list[ModelEntry]:
    """The entries in models.json (not the starter); a damaged file is a ModelRegistryError."""
    path = registry_path(state_dir)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelRegistryError(f"{path} cannot be read ({exc}). Fix or delete it; deleting it forgets the "
                                 "models you added (their files are kept).") from exc
    models = raw.get("models") if isinstance(raw, dict) else None
    if not isinstance(models, list):
        raise ModelRegistryError(f"{path} has no \"models\" list. Fix or delete it; deleting it forgets the "
                                 "models you added (their files are kept).")
    entries: list[ModelEntry] = []
    for item in models:
        try:
            entries.append(ModelEntry(id=str(item["id"]), path=str(item["path"]), source=str(item.get("source", SOURCE_ADDED)),
                                      sha256=str(item.get("sha256", "")), size_bytes=int(item.get("sizeBytes", 0)),
                                      url=str(item.get("url", "")), mmproj=str(item.get("mmproj") or "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ModelRegistryError(f"{path} has a malformed entry {item!r}; each needs at least \"id\" and "
                                     "\"path\". Fix or remove that entry.") from None
    return entries


def list_models(state_dir: Path, cache: Path) -> list[ModelEntry]:
    """The starter model first, then the registered ones sorted by id."""
    others = sorted((m for m in stored_models(state_dir) if m.id != STARTER_MODEL_ID), key=lambda m: m.id)
    return [starter_entry(cache), *others]


def find_model(state_dir: Path, cache: Path, model_id: str) -> ModelEntry | None:
    return next((m for m in list_models(state_dir, cache) if m.id == model_id), None)


def register_model(state_dir: Path, cache: Path, file: Path, model_id: str | None = None, *,
                   source: str = SOURCE_ADDED, sha256: str = "", url: str = "",
                   mmproj: Path | None = None) -> ModelEntry:
    """Record an existing GGUF file under an id (default: from its file name), with the
    vision projector `mmproj` that belongs to it when given."""
    file = Path(file).expanduser()
    if not file.is_file():
        raise ModelRegistryError(f"{file} does not exist or is not a file. Give the path of a .gguf model file.")
    if not has_gguf_magic(file):
        raise ModelRegistryError(f"{file} is not a GGUF model (it does not start with the GGUF magic bytes). "
                                 "llama-server only loads .gguf files; convert the model or pick another file.")
    file = file.resolve()
    projector = _checked_projector(mmproj, file) if mmproj is not None else None
    new_id = validate_model_id(model_id if model_id else default_model_id(file))
    if new_id == STARTER_MODEL_ID:
        raise ModelRegistryError(f"{new_id!r} is the built-in starter model's id. Pass --id with another name.")
    entries = stored_models(state_dir)
    clash = next((m for m in entries if m.id == new_id), None)
    if clash is not None and Path(clash.path) != file:
        raise ModelRegistryError(f"the model id {new_id!r} is already used for {clash.path}. Pass --id with "
                                 "another name, or pick that model with `atomic-agent models use`.")
    entry = ModelEntry(id=new_id, path=str(file), source=source, sha256=sha256,
                       size_bytes=file.stat().st_size, url=url, mmproj=str(projector) if projector else "")
    _write(state_dir, [*(m for m in entries if m.id != new_id), entry])
    return entry


def _checked_projector(mmproj: Path, model: Path) -> Path:
    projector = Path(mmproj).expanduser()
    if not projector.is_file():
        raise ModelRegistryError(f"the projector {projector} does not exist or is not a file. Give the path of the "
                                 "model's mmproj .gguf file (it is published beside the model, e.g. mmproj-F16.gguf).")
    if not has_gguf_magic(projector):
        raise ModelRegistryError(f"the projector {projector} is not a GGUF file (no GGUF magic bytes); llama-server "
                                 "loads only .gguf projectors (--mmproj).")
    projector = projector.resolve()
    if projector == model:
        raise ModelRegistryError(f"{projector} was given as both the model and its projector; --mmproj takes the "
                                 "separate projector file (mmproj-*.gguf) that comes with a vision model.")
    return projector


def _write(state_dir: Path, entries: list[ModelEntry]) -> None:
    body = {"version": REGISTRY_VERSION, "models": [m.to_json() for m in sorted(entries, key=lambda m: m.id)]}
    write_atomic(registry_path(state_dir), json.dumps(body, indent=2) + "\n", mode=0o644)


def resolve_model_file(model: str, state_dir: Path, cache: Path) -> Path:
    """The GGUF file for `llama.model` (a registered id, or a path to a GGUF file)."""
    entry = find_model(state_dir, cache, model)
    if entry is not None:
        if entry.present():
            return Path(entry.path)
        if entry.source == SOURCE_STARTER:
            raise ModelMissingError(f"the starter model {model!r} is not downloaded yet (expected {entry.path}). "
                                    "Run `atomic-agent llama install` to fetch it.")
        raise ModelMissingError(f"model {model!r} is registered at {entry.path}, but that file is gone. Restore the "
                                "file, register it again with `atomic-agent models add PATH --id ID`, or choose "
                                "another model with `atomic-agent models use ID`.")
    candidate = Path(model).expanduser()
    if model and candidate.is_file():
        if not has_gguf_magic(candidate):
            raise ModelMissingError(f"llama.model points at {candidate}, which is not a GGUF file. Set it to a "
                                    "registered model id (`atomic-agent models list`).")
        return candidate.resolve()
    raise ModelMissingError(f"the model {model!r} (llama.model, or --model) is neither a registered model id nor an existing "
                            "GGUF file. See `atomic-agent models list`, then `atomic-agent models use ID`.")
