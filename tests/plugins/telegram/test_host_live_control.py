"""The same live control through the hosts: the sidecar's `telegram_status` /
`telegram_control` and serve's GET/POST /api/telegram (operator only). Each change is
persisted first, then applied to the running channel; no answer ever carries the token."""

from __future__ import annotations

import asyncio
import json

import httpx

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram.bot_token import read_token

from .channel_harness import boot_state, write_state
from .fake_bot_api import TOKEN


async def test_sidecar_controls_the_channel_live(tmp_path, bot_api) -> None:
    from atomic_agent.api import create_runtime
    from atomic_agent.plugins.sidecar.protocol_router import handle_item
    from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
    from atomic_agent.plugins.sidecar.sidecar_server import SidecarLimits, SidecarServer
    from tests.plugins.sidecar.sidecar_harness import SchemaCheckedSink

    state = write_state(tmp_path / "state", bot_api, enabled=False, token=None)
    sink = SchemaCheckedSink(lambda _m: None)
    server = SidecarServer(ProtocolWriter(sink), SidecarLimits(), working_dir=tmp_path)
    runtime = await create_runtime(boot_context=boot_state(state), provider=ScriptedProvider(),
                                   ask=server.approvals.ask, serving=True)
    server.bind(runtime)

    async def call(request_id: int, kind: str, **fields) -> dict:
        await handle_item(server, json.dumps({"id": request_id, "type": kind, **fields}).encode())
        return next(m for m in sink.messages if m["type"] == "response" and m["id"] == request_id)

    try:
        status = (await call(1, "telegram_status"))["result"]["telegram"]
        assert (status["state"], status["hasToken"]) == ("disabled", False)
        refused = await call(2, "telegram_control", action="set_token", token="not a token")
        assert refused["ok"] is False and refused["error"]["code"] == "telegram_refused"
        stored = await call(3, "telegram_control", action="set_token", token=TOKEN)
        assert stored["ok"] and read_token(state) == TOKEN
        enabled = (await call(4, "telegram_control", action="enable"))["result"]["telegram"]
        assert enabled["state"] == "up" and json.loads((state / "config.json").read_text())["telegram"]["enabled"]
        paired = (await call(5, "telegram_control", action="pair", seconds=30))["result"]["telegram"]
        assert paired["pairingOpen"]
        disabled = (await call(6, "telegram_control", action="disable"))["result"]["telegram"]
        assert disabled["state"] == "disabled"
        assert TOKEN not in json.dumps(sink.messages)
        assert not sink.problems, sink.problems  # every line matched the published schema
    finally:
        await server.shutdown()
        await runtime.close()


def test_serve_controls_the_channel_for_the_operator_only(tmp_path, bot_api) -> None:
    from atomic_agent.runtime.runtime import Runtime
    from tests.plugins.serve.serve_harness import ServeHarness

    state = write_state(tmp_path / "state", bot_api, enabled=False)
    operator = "o" * 40
    harness = ServeHarness(tmp_path, operator_token=operator,
                           runtime_factory=lambda ask: Runtime(boot_state(state), provider=ScriptedProvider(), ask=ask))
    headers = {"Content-Type": "application/json", "X-Atomic-Operator": operator}
    try:
        with httpx.Client(base_url=harness.base_url, trust_env=False) as client:
            assert client.get("/api/telegram").status_code == 403
            assert client.post("/api/telegram", json={"action": "enable"}).status_code == 403
            assert client.get("/api/telegram", headers=headers).json()["state"] == "disabled"
            refused = client.post("/api/telegram", json={"action": "pair"}, headers=headers)
            assert refused.status_code == 400 and refused.json()["error"]["code"] == "telegram_refused"
            bad = client.post("/api/telegram", json={"action": "enable", "seconds": True}, headers=headers)
            assert bad.status_code == 400
            up = client.post("/api/telegram", json={"action": "enable"}, headers=headers).json()
            assert up["state"] == "up" and up["hasToken"] and TOKEN not in json.dumps(up)
            cleared = client.post("/api/telegram", json={"action": "clear_owner"}, headers=headers).json()
            assert cleared["ownerUserId"] is None
            assert json.loads((state / "config.json").read_text())["telegram"]["ownerUserId"] is None
            down = client.post("/api/telegram", json={"action": "disable"}, headers=headers).json()
            assert down["state"] == "disabled"
    finally:
        assert harness.loop is not None
        asyncio.run_coroutine_threadsafe(harness.runtime.service("telegram").stop(), harness.loop).result(30)
        harness.stop()
