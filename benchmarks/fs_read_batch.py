"""Wall time of one batch of 8 `os.fs.read` calls through the batch executor (pure reads fan
out) against the sum of the same 8 reads run one by one, on real files in a temp dir.

Each read asks for lines near the end of its file, so it streams the whole file. With the
files in the page cache a read is CPU work under the GIL, so on a small machine the batch
mostly saves nothing; fan-out pays where reads wait on the disk or a network filesystem.

Usage: .venv/bin/python benchmarks/fs_read_batch.py [--lines N] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from atomic_agent.agent.batch_executor import execute_batch
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.tool_calls import ToolCall
from atomic_agent.api import make_runtime_view, make_tool_context
from atomic_agent.plugins.os.fs import tool_specs
from atomic_agent.tools.tool_registry import ToolRegistry

CALLS = 8


def make_files(root: Path, lines: int) -> list[Path]:
    paths = []
    for i in range(CALLS):
        path = root / f"file{i}.log"
        path.write_text("".join(f"{i}:{n:08d} lorem ipsum dolor sit amet, consectetur adipiscing\n"
                                for n in range(lines)))
        paths.append(path)
    return paths


async def one_round(registry: ToolRegistry, root: Path, calls: list[ToolCall]) -> tuple[float, float]:
    spec = registry.get("os.fs.read")
    ctx = make_tool_context(root)

    async def run_call(_index: int, call: ToolCall):
        return await spec.run(call.args, ctx)

    started = time.perf_counter()
    for call in calls:
        result = await spec.run(call.args, ctx)
        assert result.status == "ok", result.summary
    serial = time.perf_counter() - started
    started = time.perf_counter()
    batch = await execute_batch(calls, registry, ToolLoopTracker(), run_call, asyncio.Event())
    batched = time.perf_counter() - started
    assert all(o.result.status == "ok" for o in batch.outcomes) and len(batch.outcomes) == CALLS
    return serial, batched


async def main_async(lines: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = make_files(root, lines)
        registry = ToolRegistry(tool_specs(make_runtime_view(root / "state")))
        calls = [ToolCall("os.fs.read", {"path": p.name, "offset": lines - 20, "limit": 20}) for p in paths]
        await one_round(registry, root, calls)  # warm the page cache and imports
        samples = [await one_round(registry, root, calls) for _ in range(rounds)]
    serial = statistics.median(s for s, _ in samples) * 1000
    batched = statistics.median(b for _, b in samples) * 1000
    size_mb = lines * 60 / 1e6
    print(f"{CALLS} x os.fs.read, {lines} lines (~{size_mb:.1f} MB) per file, median of {rounds} rounds")
    print(f"  one by one (sum): {serial:8.1f} ms")
    print(f"  one batch (wall): {batched:8.1f} ms   speed-up x{serial / batched:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main_async(args.lines, args.rounds))


if __name__ == "__main__":
    main()
