"""An in-process sidecar over a scripted provider: send request lines, read what it wrote.

Every message the sidecar writes is checked against the published schema; a test fails
at teardown if any line broke it.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_agent.plugins.sidecar.protocol_router import handle_item
from atomic_agent.plugins.sidecar.protocol_schema import outgoing_problem
from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
from atomic_agent.plugins.sidecar.sidecar_server import DEFAULT_LIMITS, SidecarLimits, SidecarServer
from tests.agent.loop_harness import ToolLog, make_runtime

WAIT_S = 30.0  # a safety net for a hung test, never a speed expectation


class SchemaCheckedSink(io.RawIOBase):
    """Collects written lines, parses and schema-checks each one."""

    def __init__(self, on_message: Callable[[dict[str, Any]], None]) -> None:
        self.messages: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self._on_message = on_message

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        text = bytes(data).decode("utf-8")
        assert text.endswith("\n") and text.count("\n") == 1, "one message per line"
        message = json.loads(text)
        problem = outgoing_problem(message)
        if problem:
            self.problems.append(f"{problem} in {text.strip()[:400]}")
        self.messages.append(message)
        self._on_message(message)
        return len(data)


class SidecarHarness:
    def __init__(self, tmp_path: Path, provider: Any, *, limits: SidecarLimits = DEFAULT_LIMITS,
                 environ: dict[str, str] | None = None, extra: list[tuple[object, str]] = (),
                 log: ToolLog | None = None) -> None:
        self._changed = asyncio.Event()
        self.sink = SchemaCheckedSink(lambda _m: self._changed.set())
        self.server = SidecarServer(ProtocolWriter(self.sink), limits, working_dir=tmp_path)
        self.runtime = make_runtime(tmp_path, provider, log, ask=self.server.approvals.ask, environ=environ, extra=extra)
        self.server.bind(self.runtime)
        self._next_id = 0

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.sink.messages

    def events(self, turn_id: str | None = None, kind: str | None = None) -> list[dict[str, Any]]:
        out = [m["event"] for m in self.messages if m["type"] == "event"]
        if turn_id is not None:
            out = [e for e in out if e.get("turnId") == turn_id]
        if kind is not None:
            out = [e for e in out if e["type"] == kind]
        return out

    async def line(self, raw: bytes | Any) -> dict[str, Any]:
        """Feed one raw line; returns the response it produced."""
        before = len(self.messages)
        await handle_item(self.server, raw)
        responses = [m for m in self.messages[before:] if m["type"] == "response"]
        assert len(responses) == 1, f"exactly one response per line, got {responses}"
        return responses[0]

    async def request(self, kind: str, **fields: Any) -> dict[str, Any]:
        self._next_id += 1
        response = await self.line(json.dumps({"id": self._next_id, "type": kind, **fields}).encode())
        assert response["id"] == self._next_id
        return response

    async def ok(self, kind: str, **fields: Any) -> dict[str, Any]:
        response = await self.request(kind, **fields)
        assert response["ok"], response
        return response["result"]

    async def wait_for(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async def wait() -> dict[str, Any]:
            while True:
                for message in self.messages:
                    if message["type"] == "event" and predicate(message["event"]):
                        return message["event"]
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(wait(), WAIT_S)

    async def turn_done(self, turn_id: str) -> list[dict[str, Any]]:
        """Wait until the turn's task is gone; returns the turn's events."""
        handle = self.server.registry.get(turn_id)
        if handle is not None and handle.task is not None:
            await asyncio.wait_for(asyncio.shield(handle.task), WAIT_S)
        return self.events(turn_id)

    async def close(self) -> None:
        await self.server.shutdown()
        assert not self.sink.problems, "schema violations:\n" + "\n".join(self.sink.problems)


class GatedProvider:
    """A ScriptedProvider whose completion number `gate_at` (0-based) waits for `release`,
    so a test can act while that inference is in flight without sleeping."""

    def __init__(self, script: list[Any], gate_at: int) -> None:
        from atomic_agent.testing.scripted_provider import ScriptedProvider

        self.inner = ScriptedProvider(script)
        self.gate_at = gate_at
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        if len(self.inner.requests) == self.gate_at:
            self.entered.set()
            await self.release.wait()
        return await self.inner.complete(request, on_delta)
