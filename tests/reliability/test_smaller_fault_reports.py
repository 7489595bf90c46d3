"""Smaller fault reports. A server that answered 503 ("loading") is not
described as unreachable; a full disk is a `storage` failure, never `[tool]`; one session's
`updatedAt` is the same time the list shows, not null."""

from __future__ import annotations

from pathlib import Path

import httpx

from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.sessions.store_errors import SessionStoreFullError
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import ServeHarness
from tests.plugins.sidecar.sidecar_harness import SidecarHarness


async def test_a_503_hint_says_the_server_answered_and_is_not_ready(tmp_path: Path) -> None:
    with FakeLlamaServer() as fake:
        fake.loading = True
        provider = LlamaServerProvider(fake.base_url, "external", retries=0)
        runtime = make_runtime(tmp_path, provider)  # type: ignore[arg-type]
        events: list[dict] = []
        try:
            result = await runtime.run_turn("hello", on_event=events.append)
        finally:
            await runtime.close()
            await provider.close()
    [unavailable] = [e for e in events if e["type"] == "llm_unavailable"]
    assert result.category == "transport"
    assert "answered HTTP 503" in unavailable["hint"] and "not ready" in unavailable["hint"]
    assert "No llama-server answered" not in unavailable["hint"]


async def test_an_unreachable_server_keeps_the_start_it_hint(tmp_path: Path) -> None:
    provider = LlamaServerProvider("http://127.0.0.1:9", "external", retries=0)
    runtime = make_runtime(tmp_path, provider)  # type: ignore[arg-type]
    events: list[dict] = []
    try:
        await runtime.run_turn("hello", on_event=events.append)
    finally:
        await runtime.close()
        await provider.close()
    [unavailable] = [e for e in events if e["type"] == "llm_unavailable"]
    assert "No llama-server answered" in unavailable["hint"]


async def test_a_full_disk_mid_turn_is_a_storage_failure_not_a_tool_failure(tmp_path: Path) -> None:
    runtime = make_runtime(tmp_path, ScriptedProvider())
    store = runtime.sessions
    original = store.append

    def append(state, entries, **kwargs):  # the disk fills after the turn's opening rows
        if any(e.kind == "assistant_reply" for e in entries):
            raise SessionStoreFullError(f"{store.path} cannot grow: the disk is full")
        return original(state, entries, **kwargs)

    store.append = append  # type: ignore[method-assign]
    events: list[dict] = []
    try:
        result = await runtime.run_turn("hello", on_event=events.append)
    finally:
        await runtime.close()
    assert (result.status, result.category) == ("failed", "storage"), result
    assert [e["category"] for e in events if e["type"] == "step_error"] == ["storage"]


async def test_one_session_has_the_updated_at_the_list_shows(tmp_path: Path) -> None:
    harness = ServeHarness(tmp_path, ScriptedProvider())
    try:
        httpx.post(f"{harness.base_url}/v1/chat/completions", timeout=60,
                   json={"messages": [{"role": "user", "content": "hi"}]})
        listed = httpx.get(f"{harness.base_url}/api/sessions").json()["data"][0]
        one = httpx.get(f"{harness.base_url}/api/sessions/{listed['id']}").json()
    finally:
        harness.stop()
    assert one["updatedAt"] is not None and one["updatedAt"] == listed["updatedAt"]
    sidecar = SidecarHarness(tmp_path / "sidecar", ScriptedProvider())
    created = (await sidecar.ok("create_session"))["session"]
    loaded = (await sidecar.ok("load_session", sessionId=created["id"]))["session"]
    listed_side = (await sidecar.ok("list_sessions"))["sessions"][0]
    await sidecar.close()
    assert created["updatedAt"] == loaded["updatedAt"] == listed_side["updatedAt"] is not None
