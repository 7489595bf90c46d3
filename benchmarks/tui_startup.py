"""TUI numbers: start-up to first paint, and the frame cost of streaming 1,000 step events.

1. In process (headless Textual, a scripted model): from constructing the app to the first
   frame painted (the chat screen composed, laid out and rendered once), median of runs.
2. The real binary in a terminal (tmux, when installed): from `atomic-agent tui` starting to
   its first screen showing the editor, as `capture-pane` sees it.
3. Streaming: 1,000 turn events (step starts, tool calls and results, reasoning deltas)
   fed to the chat as a running turn emits them, with a frame rendered every 10 events;
   prints the mean and worst frame and the total, and a key press's latency mid-stream
   (the app must stay responsive while a turn streams).

Usage: .venv/bin/python benchmarks/tui_startup.py [--runs N] [--no-binary]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins import tui as tui_plugin
from atomic_agent.plugins.tui.tui_app import AtomicTui

EVENTS = 1000
FRAME_EVERY = 10


def stream_events(n: int) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"type": "turn_started", "sessionId": "bench", "turnIndex": 0}]
    step = 0
    while len(events) < n:
        events.append({"type": "step_started", "step": step})
        events += [{"type": "reasoning_delta", "delta": "thinking about the next file "} for _ in range(3)]
        for i in range(3):
            events.append({"type": "tool_call_started", "tool": "os.fs.read", "args": {"path": f"src/file_{step}_{i}.py"},
                           "batchIndex": i, "batchSize": 3})
            events.append({"type": "tool_call_result", "tool": "os.fs.read", "status": "ok",
                           "summary": f"{40 + i} lines, def main() ...", "batchIndex": i, "batchSize": 3})
        step += 1
    return events[:n]


async def first_paint(state: Path) -> float:
    runtime = await runtime_for_test(state, plugins={"tui": tui_plugin}, provider=ScriptedProvider([]))
    try:
        started = time.perf_counter()
        app = AtomicTui(runtime, working_dir=state)
        painted = asyncio.get_running_loop().create_future()

        def mark() -> None:
            if not painted.done():
                painted.set_result(time.perf_counter())

        async with app.run_test(size=(100, 30)):
            app.call_after_refresh(mark)
            at = await asyncio.wait_for(painted, 30)
        return at - started
    finally:
        await runtime.close()


async def streaming(state: Path) -> dict[str, float]:
    runtime = await runtime_for_test(state, plugins={"tui": tui_plugin}, provider=ScriptedProvider([]))
    try:
        app = AtomicTui(runtime, working_dir=state)
        async with app.run_test(size=(100, 30)) as pilot:
            app.orchestrator.busy = True  # as while a turn runs: the editor steers
            frames: list[float] = []
            key_latency = 0.0
            started = time.perf_counter()
            for i, event in enumerate(stream_events(EVENTS)):
                app.turn_event(event)
                if (i + 1) % FRAME_EVERY == 0:
                    t0 = time.perf_counter()
                    await pilot.pause()  # lets the app lay out and paint this frame
                    frames.append(time.perf_counter() - t0)
                if i == EVENTS // 2:
                    t0 = time.perf_counter()
                    await pilot.press("x")  # a key typed into the editor mid-stream
                    key_latency = time.perf_counter() - t0
            total = time.perf_counter() - started
            assert app.query_one("#editor").text == "x"
        return {"total_s": total, "frame_mean_ms": statistics.mean(frames) * 1000,
                "frame_max_ms": max(frames) * 1000, "frame_p95_ms": sorted(frames)[int(len(frames) * 0.95)] * 1000,
                "per_event_us": total / EVENTS * 1e6, "key_latency_ms": key_latency * 1000}
    finally:
        await runtime.close()


def binary_first_screen(state: Path) -> float | None:
    if shutil.which("tmux") is None:
        return None
    cli = Path(sys.executable).with_name("atomic-agent")
    name = f"tui-bench-{uuid.uuid4().hex[:8]}"
    started = time.perf_counter()
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "100", "-y", "30",
                    f"{cli} --state-dir {state} tui; sleep 5"], check=True)
    try:
        while time.perf_counter() - started < 60:
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if "⏎ send" in screen:
                return time.perf_counter() - started
            time.sleep(0.02)
        return None
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-binary", action="store_true", help="skip the real binary under tmux")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f} (every number below scales with it)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paints = [asyncio.run(first_paint(root / f"paint{i}")) for i in range(args.runs)]
        print(f"first paint in process (headless): median {statistics.median(paints) * 1000:.0f} ms, "
              f"min {min(paints) * 1000:.0f} ms over {args.runs} runs")
        if not args.no_binary:
            binary = [binary_first_screen(root / f"bin{i}") for i in range(min(args.runs, 3))]
            seen = [b for b in binary if b is not None]
            if seen:
                print(f"`atomic-agent tui` to its first screen (tmux): median {statistics.median(seen) * 1000:.0f} ms "
                      f"over {len(seen)} runs")
            else:
                print("`atomic-agent tui` first screen: not measured (no tmux, or the screen never showed)")
        stats = asyncio.run(streaming(root / "stream"))
        print(f"streaming {EVENTS} step events, a frame every {FRAME_EVERY}: total {stats['total_s'] * 1000:.0f} ms "
              f"({stats['per_event_us']:.0f} µs/event); frame mean {stats['frame_mean_ms']:.1f} ms, "
              f"p95 {stats['frame_p95_ms']:.1f} ms, max {stats['frame_max_ms']:.1f} ms; "
              f"a key press mid-stream {stats['key_latency_ms']:.1f} ms")


if __name__ == "__main__":
    main()
