"""The sidecar's `task_list|show|create|cancel` reach the running host's durable tasks (the
tasks plugin's store), every line checked against the protocol schema."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
from atomic_agent.plugins.sidecar.sidecar_server import SidecarLimits, SidecarServer
from tests.plugins.sidecar.sidecar_harness import SchemaCheckedSink
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import answering_provider


async def test_sidecar_creates_lists_shows_and_cancels_tasks(tmp_path: Path) -> None:
    from atomic_agent.plugins.sidecar.protocol_router import handle_item

    sink = SchemaCheckedSink(lambda _m: None)
    server = SidecarServer(ProtocolWriter(sink), SidecarLimits(), working_dir=tmp_path)
    runtime = await task_runtime(tmp_path, answering_provider(), FakeClock())
    server.bind(runtime)

    async def request(kind: str, **fields):
        before = len(sink.messages)
        await handle_item(server, json.dumps({"id": before + 1, "type": kind, **fields}).encode())
        return [m for m in sink.messages[before:] if m["type"] == "response"][0]

    try:
        assert (await request("task_list"))["result"] == {"tasks": []}
        made = await request("task_create", message="water the plants",
                             schedule={"kind": "cron", "expression": "0 9 * * *", "tz": "Europe/Lisbon"})
        task = made["result"]["task"]
        assert made["ok"] and task["status"] == "pending" and task["schedule"]["kind"] == "cron"
        assert [t["id"] for t in (await request("task_list"))["result"]["tasks"]] == [task["id"]]
        shown = await request("task_show", taskId=task["id"])
        assert shown["result"]["task"]["message"] == "water the plants" and shown["result"]["runs"] == []
        bad = await request("task_create", message="x", schedule={"kind": "cron", "expression": "not cron"})
        assert bad["error"]["code"] == "invalid_request" and "5-field cron" in bad["error"]["message"]
        cancelled = await request("task_cancel", taskId=task["id"])
        assert cancelled["result"]["task"]["status"] == "cancelled"
        again = await request("task_cancel", taskId=task["id"])  # idempotent
        assert again["result"]["task"]["status"] == "cancelled"
        missing = await request("task_show", taskId="nope")
        assert missing["error"]["code"] == "task_not_found"
    finally:
        await server.shutdown()
        await runtime.close()
    assert not sink.problems, sink.problems
