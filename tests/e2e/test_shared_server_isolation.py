"""One llama-server, many processes, no leaks: two `atomic-agent run` processes in two
workspaces against one real server, side by side, six rounds. No reply may name the other
workspace's files, and no process may pin a slot while the other's completion is in it.

Before the RAM prompt cache was turned off, 6 of 12 such replies named the other folder's
files (ggml-org/llama.cpp#27148); before the cross-process slot leases, both processes pinned
slot 0 and one completion queued behind the other's in the same slot.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from atomic_agent.api import resolve_cache_dir
from atomic_agent.plugins.llama_server.slot_leases import SlotLeases

pytestmark = pytest.mark.llama_server

ROUNDS = 6
FILES = {"a": ["apricot_plan.md", "avocado_notes.txt", "almond_budget.csv"],
         "b": ["blueberry_plan.md", "banana_notes.txt", "bilberry_budget.csv"]}


def _workspaces(tmp_path: Path) -> dict[str, Path]:
    spaces = {}
    for name, files in FILES.items():
        work = tmp_path / f"workspace-{name}"
        work.mkdir()
        for file in files:
            (work / file).write_text(f"{file} belongs to workspace {name}\n")
        spaces[name] = work
    return spaces


def _start_run(url: str, state: Path, work: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "ATOMIC_AGENT_LLAMA_URL": url, "ATOMIC_AGENT_MAX_STEPS": "4",
           "ATOMIC_AGENT_MEMORY_REFLECTION": "0"}
    cli = str(Path(sys.executable).parent / "atomic-agent")
    return subprocess.Popen([cli, "--state-dir", str(state), "run",
                             "--cwd", str(work), "--no-approval", "list the files in this folder"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _completions(state: Path) -> list[dict[str, Any]]:
    """Every llm_completion of every session in `state`, with its [start, end] in seconds."""
    out = []
    for trace in (state / "traces").glob("*.ndjson"):
        for line in trace.read_text().splitlines():
            event = json.loads(line)
            if event.get("type") == "llm_completion":
                out.append(event)
    return out


def _interval(event: dict[str, Any]) -> tuple[float, float]:
    end = _timestamp(event)
    return end - event["durationMs"] / 1000, end


def _timestamp(event: dict[str, Any]) -> float:
    from datetime import datetime

    return datetime.fromisoformat(str(event["ts"]).replace("Z", "+00:00")).timestamp()


class _SlotWatcher:
    """Polls /slots (prompts visible with LLAMA_SERVER_SLOTS_DEBUG) and the lease files while the
    runs go on: a slot at work for one workspace must never be leased by the other's process."""

    def __init__(self, url: str, spaces: dict[str, Path]) -> None:
        self.url = url
        self.spaces = spaces
        self.pids: dict[int, str] = {}
        self.samples = 0
        self.both_at_work = 0
        self.violations: list[str] = []
        self._stop = threading.Event()
        self._leases = SlotLeases(url, [resolve_cache_dir()])
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> _SlotWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _owner(self, prompt: str) -> str | None:
        owners = [name for name, work in self.spaces.items() if str(work) in prompt]
        return owners[0] if len(owners) == 1 else None

    def _run(self) -> None:
        with httpx.Client(timeout=5) as client:
            while not self._stop.is_set():
                before = self._leases.held(2)
                slots = client.get(f"{self.url}/slots").json()
                after = self._leases.held(2)
                self.samples += 1
                at_work = {}
                for slot in slots:
                    owner = self._owner(str(slot.get("prompt", ""))) if slot.get("is_processing") else None
                    if owner is None:
                        continue
                    at_work[slot["id"]] = owner
                    holders = {self.pids.get(before.get(slot["id"]) or -1), self.pids.get(after.get(slot["id"]) or -1)}
                    if len(holders) == 1 and None not in holders and owner not in holders:
                        self.violations.append(f"slot {slot['id']} works for {owner} while {holders} holds it")
                if len(set(at_work.values())) == 2:
                    self.both_at_work += 1
                time.sleep(0.02)


@pytest.fixture(scope="module")
def debug_server(tmp_path_factory: pytest.TempPathFactory):
    """A server of its own whose /slots shows each slot's prompt, so a slot's work can be
    attributed to a workspace."""
    from atomic_agent.plugins.llama_server.testing.llama_fixture import start_or_fail, stop_session_server

    state = tmp_path_factory.mktemp("isolation-server")
    os.environ["LLAMA_SERVER_SLOTS_DEBUG"] = "1"
    try:
        handle, outcome = start_or_fail(state)
    finally:
        del os.environ["LLAMA_SERVER_SLOTS_DEBUG"]
    yield handle
    stop_session_server(state, outcome)


def test_concurrent_runs_in_two_workspaces_never_see_each_others_files(debug_server, tmp_path: Path) -> None:
    spaces = _workspaces(tmp_path)
    states = {name: tmp_path / f"state-{name}" for name in spaces}
    leaks: list[str] = []
    replies = 0
    with _SlotWatcher(debug_server.base_url, spaces) as watcher:
        for round_no in range(ROUNDS):
            procs = {}
            for name, work in spaces.items():
                procs[name] = _start_run(debug_server.base_url, states[name], work)
                watcher.pids[procs[name].pid] = name
            for name, proc in procs.items():
                out, err = proc.communicate(timeout=600)
                assert proc.returncode == 0, f"round {round_no}, workspace {name}: {err[-2000:]}"
                replies += 1
                other = "b" if name == "a" else "a"
                named = [f for f in FILES[other] if f in out or f.split("_")[0] in out]
                if named:
                    leaks.append(f"round {round_no}: workspace {name}'s reply names {named}: {out[:300]!r}")
    print(f"shared-server isolation: {replies} concurrent replies, {len(leaks)} leaks; /slots sampled "
          f"{watcher.samples} times, both workspaces at work at once in {watcher.both_at_work} samples")
    assert replies == 2 * ROUNDS
    assert not leaks, "\n".join(leaks)
    assert not watcher.violations, "\n".join(watcher.violations[:10])
    # completions that ran at the same time ran in different slots (trace intervals per slot)
    runs = {name: [e for e in _completions(states[name]) if e["slotId"] >= 0] for name in spaces}
    assert runs["a"] and runs["b"]
    clashes = []
    for a in runs["a"]:
        for b in runs["b"]:
            (a0, a1), (b0, b1) = _interval(a), _interval(b)
            overlap = min(a1, b1) - max(a0, b0)
            if a["slotId"] == b["slotId"] and overlap > 0.05:
                clashes.append(f"slot {a['slotId']}: a {a0:.2f}-{a1:.2f}, b {b0:.2f}-{b1:.2f}")
    assert not clashes, "two processes' completions shared one slot at once:\n" + "\n".join(clashes)
