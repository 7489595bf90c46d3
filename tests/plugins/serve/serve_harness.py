"""`serve`'s app on a real loopback port: uvicorn on its own thread and event loop, the
runtime over a scripted provider (or any runtime a test builds), clients in the test thread."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from atomic_agent.plugins.serve.http_app import build_app
from atomic_agent.plugins.serve.serve_runner import make_server
from atomic_agent.plugins.serve.server_context import ServeContext, ServeSettings
from tests.agent.loop_harness import make_runtime

WAIT_S = 60.0  # a safety net for a hung test, never a speed expectation
JSON = {"Content-Type": "application/json"}  # serve refuses any other body type


class ServeHarness:
    def __init__(self, tmp_path: Path, provider: Any = None, *, api_key: str | None = None,
                 grants_allowed: bool = True, approval_timeout_s: float = 480.0,
                 runtime_factory: Callable[[Any], Any] | None = None, operator_token: str | None = None,
                 allowed_hosts: tuple[str, ...] = (), allowed_origins: tuple[str, ...] = (), port: int = 0) -> None:
        self.ctx = ServeContext(ServeSettings(working_dir=tmp_path, api_key=api_key, grants_allowed=grants_allowed,
                                              approval_timeout_s=approval_timeout_s, operator_token=operator_token,
                                              allowed_hosts=allowed_hosts, allowed_origins=allowed_origins))
        factory = runtime_factory or (lambda ask: make_runtime(tmp_path, provider, ask=ask))
        self.runtime = factory(self.ctx.approvals.ask)
        self.ctx.bind(self.runtime)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart on the port just freed
        self._sock.bind(("127.0.0.1", port))
        self.port = self._sock.getsockname()[1]
        self.server = make_server(build_app(self.ctx), "127.0.0.1", self.port)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, name="serve-harness", daemon=True)
        self._thread.start()
        started = self._ready.wait(WAIT_S)
        if self._error is not None:
            raise self._error
        assert started, "the server did not start"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _main(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            serving = asyncio.ensure_future(self.server.serve(sockets=[self._sock]))
            while not self.server.started and not serving.done():
                await asyncio.sleep(0.005)
            self._ready.set()
            try:
                await serving
            finally:
                await self.ctx.shutdown()

        try:
            asyncio.run(main())
        except BaseException as exc:  # surfaced to the test thread
            self._error = exc
            self._ready.set()

    def call(self, fn: Callable[[], Any]) -> Any:
        """Run `fn` on the server's loop (for state that belongs to it) and return its result."""
        assert self.loop is not None

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(WAIT_S)

    def run_async(self, make: Callable[[], Awaitable[Any]]) -> Any:
        """Await `make()` on the server's loop (what must live there: MCP connections) and return its result."""
        assert self.loop is not None
        return asyncio.run_coroutine_threadsafe(make(), self.loop).result(WAIT_S)

    def wait_turns(self) -> None:
        """Until every turn in flight right now is over (including ones whose client left)."""
        assert self.loop is not None

        async def wait() -> None:
            tasks = [t.task for t in list(self.ctx.turns.values()) if t.task is not None]
            if tasks:
                await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(wait(), self.loop).result(WAIT_S)

    def stop(self) -> None:
        self.server.should_exit = True
        self._thread.join(WAIT_S)
        if self._error is not None:
            raise self._error


class ThreadGatedProvider:
    """A ScriptedProvider whose completion number `gate_at` waits until the test thread calls
    `release.set()`; `entered` tells the test thread that completion is in flight."""

    def __init__(self, script: list[Any], gate_at: int) -> None:
        from atomic_agent.testing.scripted_provider import ScriptedProvider

        self.inner = ScriptedProvider(script)
        self.gate_at = gate_at
        self.entered = threading.Event()
        self.release = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        if len(self.inner.requests) == self.gate_at:
            self.entered.set()
            await asyncio.to_thread(self.release.wait, WAIT_S)
        return await self.inner.complete(request, on_delta)
