"""/api/tasks through `serve` on loopback: create, list, show, run, history, idempotent cancel,
structured validation errors, and 404 everywhere without the tasks plugin."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

import atomic_agent.plugins.tasks as tasks_plugin
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness
from tests.plugins.tasks.task_kit import write_tasks_config
from tests.turns.turn_kit import answering_provider


def _with_tasks(tmp_path: Path):
    def factory(ask):
        write_tasks_config(tmp_path / "state")
        return make_runtime(tmp_path, answering_provider(), ask=ask, extra=[(tasks_plugin, "tasks")])

    return factory


def test_task_routes_create_list_run_history_and_cancel_idempotently(tmp_path: Path):
    serve = ServeHarness(tmp_path, runtime_factory=_with_tasks(tmp_path))
    try:
        base = serve.base_url
        created = httpx.post(f"{base}/api/tasks", json={"message": "http task",
                                                        "schedule": {"kind": "interval", "everyMs": 3_600_000}})
        assert created.status_code == 201, created.text
        task = created.json()
        assert task["origin"] == "http" and task["sessionId"]
        assert [t["id"] for t in httpx.get(f"{base}/api/tasks").json()["data"]] == [task["id"]]
        ran = httpx.post(f"{base}/api/tasks/{task['id']}/run")
        assert ran.status_code == 202
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            history = httpx.get(f"{base}/api/tasks/{task['id']}/history").json()["data"]
            if history and history[-1]["status"] == "completed":
                break
            time.sleep(0.02)
        assert [r["status"] for r in history] == ["completed"] and history[0]["turnId"]
        shown = httpx.get(f"{base}/api/tasks/{task['id']}").json()
        assert shown["status"] == "pending" and shown["runs"][0]["status"] == "completed"  # recurring: next firing
        first = httpx.delete(f"{base}/api/tasks/{task['id']}").json()
        second = httpx.delete(f"{base}/api/tasks/{task['id']}").json()
        assert first == second and first["status"] == "cancelled"
        assert httpx.post(f"{base}/api/tasks/{task['id']}/run").status_code == 409
        bad = httpx.post(f"{base}/api/tasks", json={"message": "x", "schedule": {"kind": "cron", "expression": "nope"}})
        assert bad.status_code == 400 and bad.json()["param"] == "expression"
        assert httpx.post(f"{base}/api/tasks", json={"message": ""}).json()["param"] == "message"
        missing = httpx.get(f"{base}/api/tasks/nope")
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "task_not_found"
    finally:
        serve.stop()


def test_task_routes_are_404_without_the_tasks_plugin(tmp_path: Path):
    serve = ServeHarness(tmp_path, answering_provider())
    try:
        for method, path in (("GET", "/api/tasks"), ("POST", "/api/tasks"), ("GET", "/api/tasks/x"),
                             ("DELETE", "/api/tasks/x"), ("POST", "/api/tasks/x/run")):
            answer = httpx.request(method, f"{serve.base_url}{path}", json={"message": "x"})
            assert answer.status_code == 404, (method, path)
    finally:
        serve.stop()
