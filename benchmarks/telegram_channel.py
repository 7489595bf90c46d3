"""The Telegram channel: inbound message -> turn admission latency, and outbound chunking.

Latency: a real runtime (scripted provider) polls the loopback fake Bot API of the tests;
each message is queued on the fake and timed until its turn's admission is committed (the
reply obligation is recorded at that moment), one message at a time; the next is sent once
the reply arrived and the previous turn's after-turn work (memory phases) ended, so what is
timed is the channel's own path, not contention with the last turn. Long polling answers as soon as an update arrives, so this is the loop's own cost:
getUpdates answer -> owner check -> run_turn admission (a FULL-durability SQLite commit).

Throughput: splitting a long markdown reply into 4,096-UTF-16-unit chunks, and splitting plus
converting each chunk to Telegram HTML, in MB/s of input.

Usage: .venv/bin/python benchmarks/telegram_channel.py [--messages N] [--megabytes M]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


async def admission_latency(messages: int) -> list[float]:
    from atomic_agent.api import ScriptedProvider
    from tests.plugins.telegram.channel_harness import OWNER, start_runtime, write_state
    from tests.plugins.telegram.fake_bot_api import FakeBotApi

    api = FakeBotApi().start()
    samples: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        state = write_state(Path(tmp) / "state", api, parse_mode="plain", poll_timeout_s=5)
        runtime = await start_runtime(state, ScriptedProvider())
        channel = runtime.service("telegram")
        admitted: list[float] = []
        store = channel.store
        original = store.open_reply

        def timed(*args, **kwargs):  # noqa: ANN002, ANN003
            delivery = original(*args, **kwargs)
            admitted.append(time.perf_counter())
            return delivery

        store.open_reply = timed
        try:
            while channel.status()["state"] != "up":
                await asyncio.sleep(0.01)
            for index in range(messages):
                sent_before = len(api.sent)
                start = time.perf_counter()
                api.send_text(OWNER, f"message {index}")
                while len(admitted) <= index:
                    await asyncio.sleep(0.0005)
                samples.append((admitted[index] - start) * 1000)
                while len(api.sent) <= sent_before:  # the reply, so the next message is a turn, not a steer
                    await asyncio.sleep(0.001)
                while runtime.memory.busy or channel.tasks._tasks:  # the previous turn's after-turn work is done
                    await asyncio.sleep(0.001)
        finally:
            await runtime.close()
            api.close()
    return samples


def chunking_throughput(megabytes: float) -> tuple[float, float, int]:
    from atomic_agent.plugins.telegram.chunk_text import chunk_text
    from atomic_agent.plugins.telegram.markdown_html import markdown_to_html

    paragraph = ("## Section\nSome **bold** text, a `code span`, a [link](https://example.org) and an emoji 😀.\n"
                 "- item one\n- item two with _italics_\n> a quote\n\n")
    text = paragraph * max(1, int(megabytes * 1024 * 1024 / len(paragraph.encode())))
    size_mb = len(text.encode()) / (1024 * 1024)
    start = time.perf_counter()
    chunks = chunk_text(text)
    split_s = time.perf_counter() - start
    start = time.perf_counter()
    for chunk in chunk_text(text):
        markdown_to_html(chunk)
    convert_s = time.perf_counter() - start
    return size_mb / split_s, size_mb / convert_s, len(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50)
    parser.add_argument("--megabytes", type=float, default=4.0)
    args = parser.parse_args()
    samples = asyncio.run(admission_latency(args.messages))
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    print(f"inbound message -> turn admission ({len(samples)} messages): median {statistics.median(samples):.1f} ms, "
          f"p95 {p95:.1f} ms, max {max(samples):.1f} ms")
    split_mbs, convert_mbs, chunks = chunking_throughput(args.megabytes)
    print(f"outbound chunking ({args.megabytes:g} MB markdown, {chunks} chunks): split {split_mbs:.1f} MB/s, "
          f"split + HTML {convert_mbs:.1f} MB/s")


if __name__ == "__main__":
    main()
