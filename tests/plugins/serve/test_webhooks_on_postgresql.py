"""Webhook deliveries on the fleet's PostgreSQL: a call retried to another host of the fleet
(behind a load balancer) is claimed once: the same Idempotency-Key creates one task and gets
the first answer again, and a replayed signed call is refused on every host."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx

import atomic_agent.plugins.postgresql as postgresql_plugin
import atomic_agent.plugins.serve as http_plugin
import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.config.config_file import CONFIG_VERSION
from atomic_agent.plugins.serve.webhook_auth import signature_for
from tests.agent.loop_harness import make_runtime
from tests.plugins.postgresql.pg_kit import raw
from tests.plugins.serve.serve_harness import ServeHarness
from tests.plugins.tasks.task_kit import TEST_TASKS_CONFIG
from tests.turns.turn_kit import answering_provider

KEY = "hmac-key-value"
ENDPOINTS = {"signed": {"messageTemplate": "build {{body.n}}", "hmacSecretEnv": "HOOK_HMAC"}}


def _host(root: Path, database: Any) -> ServeHarness:
    server, name = database
    state = root / "state"
    state.mkdir(parents=True)
    (state / "config.json").write_text(json.dumps({
        "version": CONFIG_VERSION, "tasks": TEST_TASKS_CONFIG, "webhooks": {"endpoints": ENDPOINTS},
        "storage": {"url": server.url(name)},
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}))
    env = {"HOOK_HMAC": KEY, "ATOMIC_AGENT_API_KEY": "bearer-key", "ATOMIC_AGENT_STORAGE_PASSWORD": server.password}

    def factory(ask: Any) -> Any:
        return make_runtime(root, answering_provider(), ask=ask, environ=dict(env),
                            extra=[(http_plugin, "http"), (tasks_plugin, "tasks"), (postgresql_plugin, "postgresql")])

    return ServeHarness(root, runtime_factory=factory, api_key="bearer-key")


def _post(host: ServeHarness, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{host.base_url}/api/webhooks/signed", content=body,
                      headers={"Content-Type": "application/json", **headers}, timeout=30)


def test_a_webhook_retried_to_another_host_of_the_fleet_creates_one_task(tmp_path: Path, postgresql_database: Any):
    hosts = [_host(tmp_path / "host-a", postgresql_database), _host(tmp_path / "host-b", postgresql_database)]
    try:
        body = b'{"n": 7}'
        stamp = str(int(time.time()))
        first = _post(hosts[0], body, {"X-Atomic-Timestamp": stamp, "Idempotency-Key": "delivery-7",
                                       "X-Webhook-Signature": signature_for(KEY, body, stamp)})
        assert first.status_code == 202, first.text
        later = str(int(time.time()) + 1)  # the sender's retry: signed again, same key
        again = _post(hosts[1], body, {"X-Atomic-Timestamp": later, "Idempotency-Key": "delivery-7",
                                       "X-Webhook-Signature": signature_for(KEY, body, later)})
        assert again.status_code in (200, 202), again.text
        assert again.json()["taskId"] == first.json()["taskId"]
        replayed = _post(hosts[1], body, {"X-Atomic-Timestamp": stamp,  # a captured call, replayed elsewhere
                                          "X-Webhook-Signature": signature_for(KEY, body, stamp)})
        assert replayed.status_code == 409 and "already accepted" in replayed.text
        with raw(postgresql_database) as conn:
            assert conn.execute("SELECT count(*) FROM tasks WHERE origin = 'webhook'").fetchone()[0] == 1
        assert not (tmp_path / "host-a" / "state" / "serve" / "webhooks.sqlite").exists()
        assert not (tmp_path / "host-b" / "state" / "serve" / "webhooks.sqlite").exists()
    finally:
        for host in hosts:
            host.stop()
