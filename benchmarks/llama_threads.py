"""Decode and prompt tokens/s of the real llama-server by thread count, on an idle machine and
beside one busy process (a CPU-bound loop, as a build or a test run would be).

Usage: .venv/bin/python benchmarks/llama_threads.py [--threads 2,1] [--rounds 3] [--model PATH]

Each thread count gets a server of its own (starter model unless --model, -c 4096, one slot,
--cache-ram 0); each round sends a ~700-token prompt with cache_prompt off (so the whole
prompt is evaluated) and decodes 96 tokens; the medians of llama-server's own timings are
printed. The default thread count of a managed server is marked: `llama.threads` 0 means
cores - 1 (thread_count.py).
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import tempfile
from pathlib import Path

import httpx

from atomic_agent.api import resolve_cache_dir
from atomic_agent.plugins.llama_server.binary_build import ensure_binary
from atomic_agent.plugins.llama_server.server_launch import start_server
from atomic_agent.plugins.llama_server.server_process import (
    LaunchSpec,
    ServerPaths,
    free_loopback_port,
    stop_recorded_server,
)
from atomic_agent.plugins.llama_server.starter_model import ensure_starter_model
from atomic_agent.plugins.llama_server.thread_count import AUTO, chat_threads, usable_cores

PROMPT = ("The operator agent reads files, runs commands and writes a short report about what it found. " * 40)


def _spin() -> None:
    while True:
        pass


def measure(url: str, rounds: int) -> tuple[float, float]:
    prompt_rates, decode_rates = [], []
    with httpx.Client(timeout=600) as client:
        for i in range(rounds):
            body = {"prompt": f"{i} {PROMPT}", "n_predict": 96, "cache_prompt": False, "temperature": 0,
                    "ignore_eos": True, "id_slot": 0}
            timings = client.post(f"{url}/completion", json=body).json()["timings"]
            prompt_rates.append(timings["prompt_per_second"])
            decode_rates.append(timings["predicted_per_second"])
    return statistics.median(prompt_rates), statistics.median(decode_rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    auto = chat_threads(AUTO, embeddings_running=False)
    parser.add_argument("--threads", default=f"{usable_cores()},{auto}",
                        help="comma-separated thread counts (default: all cores, then the managed default)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", type=Path, default=None)
    args = parser.parse_args()
    cache = resolve_cache_dir()
    starter = ensure_starter_model(cache)
    binary = ensure_binary("", cache, starter)
    model = args.model or starter
    counts = [int(t) for t in args.threads.split(",") if t.strip()]
    print(f"llama-server tokens/s by --threads, {usable_cores()} usable cores, model {model.name}, "
          f"median of {args.rounds} rounds (managed default: {auto})")
    print(f"{'threads':>8} {'load':>6} {'prompt t/s':>11} {'decode t/s':>11}")
    for threads in counts:
        with tempfile.TemporaryDirectory() as state:
            paths = ServerPaths.for_state_dir(Path(state))
            spec = LaunchSpec(binary=binary, model=model, port=free_loopback_port(), ctx_size=4096, parallel=1,
                              threads=threads, alias="bench")
            outcome = start_server(spec, paths, die_with_parent=True)
            try:
                for load in ("idle", "busy"):
                    spinner = None
                    if load == "busy":
                        spinner = multiprocessing.Process(target=_spin, daemon=True)
                        spinner.start()
                    try:
                        prompt_tps, decode_tps = measure(outcome.base_url, args.rounds)
                    finally:
                        if spinner is not None:
                            spinner.terminate()
                            spinner.join()
                    mark = " *" if threads == auto else ""
                    print(f"{threads:>8} {load:>6} {prompt_tps:>11.1f} {decode_tps:>11.1f}{mark}", flush=True)
            finally:
                stop_recorded_server(paths)
                if outcome.process is not None:
                    outcome.process.wait()
    print("* the managed server's default (llama.threads 0)", file=sys.stderr)


if __name__ == "__main__":
    main()
