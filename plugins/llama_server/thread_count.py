"""How many CPU threads a managed llama-server gets when the config leaves it to us.

ggml's CPU threads meet at a barrier after every operation, so a server with as many threads
as the machine has cores stalls whenever anything else runs: measured on 2 cores, `--threads
2` decoded 103 tokens/s idle and 0.6 tokens/s beside one busy process, while `--threads 1`
held 58-60 (benchmarks/llama_threads.py prints the current figures). So the default leaves
one core to everything else on the machine: the agent itself, the tools it runs, the user's
own programs. The embedding daemon serves short bursts and gets one thread; when it runs
beside the chat server on a machine with cores to spare, it takes one more off the chat
server so the two never fight for the same cores.
"""

from __future__ import annotations

import os

AUTO = 0  # `llama.threads` / `llama.embeddings.threads` 0: chosen here


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # no affinity call on this platform
        return max(os.cpu_count() or 1, 1)


def chat_threads(configured: int, *, embeddings_running: bool, cores: int | None = None) -> int:
    """`--threads` for the chat server: the configured count, or cores - 1 (at least 1), less
    one more when the embedding daemon runs beside it on a machine with 4 or more cores."""
    if configured > 0:
        return configured
    n = usable_cores() if cores is None else cores
    spare = 1 if embeddings_running and n >= 4 else 0
    return max(n - 1 - spare, 1)


def embedding_threads(configured: int) -> int:
    """`--threads` for the embedding daemon: the configured count, else 1."""
    return configured if configured > 0 else 1


def describe_choice(configured: int, chosen: int, cores: int | None = None) -> str:
    """What `llama status` and `doctor` say about the thread count."""
    if configured > 0:
        return f"{chosen} (llama.threads)"
    return f"{chosen} (auto: {usable_cores() if cores is None else cores} cores, one left for the rest of the machine)"
