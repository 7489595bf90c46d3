"""Agent-loop numbers: prompt tokens per step, framework overhead per step, a batch of 8
pure reads, cache reuse on the real server, and time to the first completion request.

Usage: .venv/bin/python benchmarks/agent_loop.py [--llama-url URL]
With --llama-url (a running llama-server with the starter model) token counts are exact
(/tokenize) and the cache-reuse ratio is measured; without it they are estimated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.agent.batch_executor import execute_batch
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.tool_calls import ToolCall
from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.prompt.build_prompt import estimate_tokens
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.tools.tool_registry import ToolRegistry


def five_step_script(names: list[str]) -> list[str]:
    read = "os.fs.read" if "os.fs.read" in names else "tool.view"
    listing = "os.fs.list" if "os.fs.list" in names else "tool.view"
    return [calls((listing, {"path": "."})), calls((read, {"path": "README.md"})),
            calls((read, {"path": "pyproject.toml"}), (read, {"path": "setup.py"})),
            calls(("tool.view", {"name": "os.fs.hash"})), calls(("reply", {"text": "done"}))]


async def prompt_tokens(state: Path, llama_url: str | None) -> None:
    provider = ScriptedProvider([])
    rt = Runtime(boot(state / "tokens", environ={}), provider=provider, environ={})
    provider.script = five_step_script(rt.registry.names())
    await rt.run_turn("look at this project", working_dir=Path.cwd())
    plan = await rt.prompt_plan()
    framed = plan.profile.frame_stable_prefix(plan.stable_prefix_for(Path.cwd()))
    counter = None
    if llama_url:
        from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient

        client = LlamaServerClient(llama_url)
        counter = client
    label = "exact (/tokenize)" if counter else "estimated"
    print(f"prompt tokens per step, 5-step scripted session, {len(rt.registry)} tools registered ({label}):")
    steps = [r for r in provider.requests if r.prompt.startswith(framed)]  # not memory sub-calls
    for step, request in enumerate(steps, start=1):
        tail = request.prompt[len(framed):]
        if counter:
            prefix_n, tail_n = len(await counter.tokenize(framed)), len(await counter.tokenize(tail))
        else:
            prefix_n, tail_n = estimate_tokens(framed), estimate_tokens(tail)
        print(f"  step {step}: prefix {prefix_n:5d}  tail {tail_n:5d}  total {prefix_n + tail_n:5d}")
    if counter:
        await counter.aclose()
    await rt.close()


async def overhead_per_step(state: Path, turns: int = 40) -> None:
    """Per step of a 5-step turn: the whole, and what is left once the tools' own run time and
    the waits for the disk (the fsyncs that make admission and answer durable) are taken out."""
    provider = ScriptedProvider([])
    rt = Runtime(boot(state / "overhead", environ={}), provider=provider, environ={})
    await rt.run_turn("warm up", working_dir=Path.cwd())
    spent = {"tools": 0.0, "disk": 0.0}

    def timed_run(spec: ToolSpec) -> ToolSpec:
        async def run(args: Any, ctx: Any) -> ToolResult:
            started = time.perf_counter()
            try:
                return await spec.run(args, ctx)
            finally:
                spent["tools"] += time.perf_counter() - started
        return attrs.evolve(spec, run=run)

    # the benchmark's own instrumentation: the registry's specs, wrapped in place
    rt.registry._specs = {name: timed_run(spec) for name, spec in rt.registry._specs.items()}
    store, wait_durable = rt.sessions, rt.sessions.wait_durable

    async def timed_wait() -> None:
        started = time.perf_counter()
        try:
            await wait_durable()
        finally:
            spent["disk"] += time.perf_counter() - started

    store.wait_durable = timed_wait  # type: ignore[method-assign]
    per_step, own, tools, disk = [], [], [], []
    for _ in range(turns):
        provider.script = five_step_script(rt.registry.names())[:2] + [calls(("tool.view", {"name": "reply"}))] * 2 + \
            [calls(("reply", {"text": "ok"}))]
        spent.update(tools=0.0, disk=0.0)
        started = time.perf_counter()
        result = await rt.run_turn("again", working_dir=Path.cwd())
        whole = (time.perf_counter() - started) * 1000 / result.steps
        per_step.append(whole)
        tools.append(spent["tools"] * 1000 / result.steps)
        disk.append(spent["disk"] * 1000 / result.steps)
        own.append(whole - tools[-1] - disk[-1])
    await rt.close()
    print(f"framework overhead per step (zero-latency provider, tracing on, SQLite FULL sync): "
          f"median {statistics.median(per_step):.2f} ms  p90 {sorted(per_step)[int(len(per_step) * 0.9)]:.2f} ms")
    print(f"  of which the tools' own run {statistics.median(tools):.2f} ms and waiting for the disk "
          f"{statistics.median(disk):.2f} ms; the framework's own work: median {statistics.median(own):.2f} ms  "
          f"p90 {sorted(own)[int(len(own) * 0.9)]:.2f} ms")


async def batch_of_reads() -> None:
    async def slow_read(args, ctx) -> ToolResult:
        await asyncio.sleep(0.05)
        return ToolResult.ok("read")

    registry = ToolRegistry([ToolSpec("bench.read", "r", {"type": "object"}, ResourceClass.PURE_READ, slow_read)])

    async def run_call(index, call):
        return await slow_read(call.args, None)

    walls = []
    for _ in range(10):
        started = time.perf_counter()
        await execute_batch([ToolCall("bench.read", {"i": i}) for i in range(8)], registry, ToolLoopTracker(),
                            run_call, asyncio.Event())
        walls.append((time.perf_counter() - started) * 1000)
    print(f"batch of 8 pure reads x 50 ms: median wall {statistics.median(walls):.1f} ms (sequential would be 400 ms)")


def cache_reuse(state: Path, llama_url: str) -> None:
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_url, "ATOMIC_AGENT_MAX_STEPS": "4"}

    async def go() -> str:
        rt = Runtime(boot(state / "cache", environ=dict(env)), environ=env)
        first = await rt.run_turn("Say hello.", working_dir=Path.cwd())
        for text in ("And again.", "Once more.", "Thanks."):
            await rt.run_turn(text, session_id=first.session_id)
        await rt.close()
        return first.session_id

    session = asyncio.run(go())
    events = [json.loads(line) for line in (state / "cache" / "traces" / f"{session}.ndjson").read_text().splitlines()]
    completions = [e for e in events if e["type"] == "llm_completion"]
    later = completions[1:]
    reused = sum(c["cacheN"] for c in later)
    evaluated = sum(c["tokensEvaluated"] for c in later)
    print(f"cache reuse on the real server, steps 2..{len(completions)}: {reused}/{evaluated} prompt tokens "
          f"= {reused / max(evaluated, 1):.1%} (step 1: cacheN {completions[0]['cacheN']})")
    # what is not reused is the newest content: within a turn the new call, its result and the
    # respond section; at a turn's start the reply, the new request and the previous result folded
    for label, group in (("within a turn (a turn's later steps)", [c for c in later if c.get("step", 0) > 0]),
                         ("at a turn's first step", [c for c in later if c.get("step", 0) == 0])):
        if group:
            new = [c["tokensEvaluated"] - c["cacheN"] for c in group]
            print(f"  {label}: {sum(c['cacheN'] for c in group)}/{sum(c['tokensEvaluated'] for c in group)} "
                  f"= {sum(c['cacheN'] for c in group) / max(sum(c['tokensEvaluated'] for c in group), 1):.1%}, "
                  f"new tokens per completion median {statistics.median(new):.0f}")


def time_to_first_request(state: Path, runs: int = 7) -> None:
    cli = Path(sys.executable).with_name("atomic-agent")
    samples = []
    for i in range(runs):
        with FakeLlamaServer() as fake:
            env = {**os.environ, "ATOMIC_AGENT_LLAMA_URL": fake.base_url}
            started = time.time()
            subprocess.run([str(cli), "--state-dir", str(state / f"ttfr{i}"), "run", "hi"], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=60)
            first = next(r for r in fake.requests if r.path == "/completion")
            samples.append((first.received_at - started) * 1000)
    print(f"process start -> first /completion request of `atomic-agent run`: median {statistics.median(samples):.0f} ms "
          f"(min {min(samples):.0f}, max {max(samples):.0f}, n={runs})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--llama-url", default=os.environ.get("ATOMIC_AGENT_LLAMA_URL"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        asyncio.run(prompt_tokens(state, args.llama_url))
        asyncio.run(overhead_per_step(state))
        asyncio.run(batch_of_reads())
        if args.llama_url:
            cache_reuse(state, args.llama_url)
        else:
            print("cache reuse: pass --llama-url to measure on a real server")
        time_to_first_request(state)


if __name__ == "__main__":
    main()
