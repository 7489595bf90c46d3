"""Fallback-chain numbers: the latency the wrapper adds to every completion, and how long
the first completion takes once the primary starts answering 503.

Usage: .venv/bin/python benchmarks/fallback_overhead.py [--calls N]

1. Overhead: the same instant in-process provider called directly and through the
   fallback seam (registry + breaker + request shaping + served-transport stamp);
   median and p95 of the per-call difference. Target: under 0.5 ms median.
2. Fail-over: two real loopback HTTP servers speaking the OpenAI chat API; the primary
   answers 503, the second answers 200. Timed from the call to the served answer, with
   the primary's retry budget off (retries=0) and at its default (2 retries, 0.5 s and
   1 s back-off), then the sticky call after it (served by the second link directly).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from atomic_agent.api import Completion, CompletionRequest, ProviderCapabilities, ProviderKind
from atomic_agent.providers.fallback_provider import FallbackTextProvider, RequestShaper
from atomic_agent.providers.llm_config import structure_llm_block
from atomic_agent.providers.provider_registry import ProviderRegistry

ANSWER = Completion(content='[{"tool": "reply", "args": {"text": "hi"}}]')


class InstantProvider:
    capabilities = ProviderCapabilities(transport="grammar", slot_affinity=True)
    mode = "bench"

    async def complete(self, request: CompletionRequest, on_delta: Any = None) -> Completion:
        if on_delta is not None:
            on_delta(ANSWER.content)
        return ANSWER

    async def close(self) -> None:
        return None


def instant_seam(provider: InstantProvider) -> FallbackTextProvider:
    kind = ProviderKind("llama-server", lambda entry, runtime: provider, InstantProvider.capabilities,
                        default_local=True)
    registry = ProviderRegistry({kind.name: kind}, structure_llm_block({}), runtime=None)
    return FallbackTextProvider(registry, RequestShaper(lambda: (), lambda: "root ::= \"[\""))


async def overhead(calls: int) -> None:
    provider = InstantProvider()
    seam = instant_seam(provider)
    bound = seam.for_session("bench-session", lambda n: None, lambda pid, c: None)
    request = CompletionRequest(prompt="x" * 4000, grammar="root ::= \"[\"", prefix_length=3000)
    sink = [].append
    direct: list[int] = []
    wrapped: list[int] = []
    for _ in range(200):  # warm up both paths
        await provider.complete(request, sink)
        await bound.complete(request, sink)
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        await provider.complete(request, sink)
        t1 = time.perf_counter_ns()
        await bound.complete(request, sink)
        t2 = time.perf_counter_ns()
        direct.append(t1 - t0)
        wrapped.append(t2 - t1)
    added = sorted(w - d for w, d in zip(wrapped, direct, strict=True))
    med = statistics.median(added) / 1e6
    p95 = added[int(len(added) * 0.95)] / 1e6
    print(f"fallback wrapper overhead over {calls} completions: median {med:.4f} ms, p95 {p95:.4f} ms "
          f"(direct median {statistics.median(direct) / 1e6:.4f} ms, wrapped {statistics.median(wrapped) / 1e6:.4f} ms)"
          f" -> target < 0.5 ms median: {'met' if med < 0.5 else 'MISSED'}")


def serve(status: int) -> ThreadingHTTPServer:
    body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "from backup"},
                                    "finish_reason": "stop"}]} if status == 200 else
                      {"error": {"message": "The server is overloaded", "type": "server_error"}}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body in one segment: no Nagle / delayed-ACK stall on keep-alive

        def log_message(self, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return httpd


async def failover(retries: int) -> None:
    from atomic_agent.plugins.openai_compatible import provider_factory

    primary, backup = serve(503), serve(200)
    entry = {"kind": "openai-compatible", "model": "m", "preset": "llamacpp"}
    llm = structure_llm_block({"providers": [
        {**entry, "id": "primary", "baseUrl": f"http://127.0.0.1:{primary.server_address[1]}/v1", "retries": retries},
        {**entry, "id": "backup", "baseUrl": f"http://127.0.0.1:{backup.server_address[1]}/v1"}],
        "fallback": {"chain": ["primary", "backup"]}})
    kind = ProviderKind("openai-compatible", provider_factory.build_openai_provider,
                        ProviderCapabilities(transport="native_tools"))
    seam = FallbackTextProvider(ProviderRegistry({kind.name: kind}, llm, runtime=None))
    request = CompletionRequest(prompt="hello", stream=False)
    seam.registry.get("primary"), seam.registry.get("backup")  # connection setup is not fail-over time
    t0 = time.perf_counter()
    first = await seam.complete(request)
    t1 = time.perf_counter()
    second = await seam.complete(request)
    t2 = time.perf_counter()
    await seam.close()
    primary.shutdown(), backup.shutdown()
    assert first.raw["servedBy"] == second.raw["servedBy"] == "backup"
    print(f"fail-over after the primary starts answering 503 (primary retries={retries}): "
          f"{(t1 - t0) * 1000:.1f} ms to the served answer; next (sticky) completion {(t2 - t1) * 1000:.1f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    await overhead(args.calls)
    await failover(0)
    await failover(2)


if __name__ == "__main__":
    asyncio.run(main())
