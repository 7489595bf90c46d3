"""POST /api/webhooks/{name} end to end through `serve` on loopback: secret and HMAC checked in
constant time, the body templated into a task (202 with its id), session modes, and each
bad input a clear answer with nothing created."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx

import atomic_agent.plugins.serve as http_plugin
import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.config.config_file import CONFIG_VERSION
from atomic_agent.plugins.serve.webhook_auth import signature_for
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness
from tests.plugins.tasks.task_kit import TEST_TASKS_CONFIG
from tests.turns.turn_kit import answering_provider, users

ENV = {"HOOK_SECRET": "s3cret-value", "HOOK_HMAC": "hmac-key-value", "ATOMIC_AGENT_API_KEY": "bearer-key"}
ENDPOINTS = {
    "deploy": {"messageTemplate": "deploy {{body.repo.name}} at {{body.sha}} ({{body.tags}})",
               "secretEnv": "HOOK_SECRET", "hmacSecretEnv": "HOOK_HMAC", "maxBodyBytes": 4096},
    "alerts": {"messageTemplate": "alert: {{body.text}}", "secretEnv": "HOOK_SECRET", "sessionMode": "persistent"},
    "open": {"messageTemplate": "no credentials configured: {{body.x}}"},
}


def _serve(tmp_path: Path) -> ServeHarness:
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "tasks": TEST_TASKS_CONFIG,
                                                   "webhooks": {"endpoints": ENDPOINTS}}))

    def factory(ask):
        return make_runtime(tmp_path, answering_provider(), ask=ask, environ=dict(ENV),
                            extra=[(http_plugin, "http"), (tasks_plugin, "tasks")])

    return ServeHarness(tmp_path, runtime_factory=factory, api_key="bearer-key")


def _signed(body: bytes, key: str = ENV["HOOK_HMAC"]) -> dict[str, str]:
    """Our signing recipe: HMAC-SHA256 over '<timestamp>.<body>', the timestamp sent alongside."""
    stamp = str(int(time.time()))
    return {"X-Atomic-Timestamp": stamp, "X-Webhook-Signature": signature_for(key, body, stamp)}


def _post(base: str, name: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(f"{base}/api/webhooks/{name}", content=body,
                      headers={"Content-Type": "application/json", **headers})


def test_a_signed_webhook_becomes_a_task_that_runs_the_templated_message(tmp_path: Path):
    serve = _serve(tmp_path)
    try:
        body = json.dumps({"repo": {"name": "atomic"}, "sha": "abc123", "tags": ["v1", "v2"]}).encode()
        good = _post(serve.base_url, "deploy", body, **{"X-Webhook-Secret": ENV["HOOK_SECRET"],
                                                        **_signed(body)})
        assert good.status_code == 202, good.text
        task_id = good.json()["taskId"]
        svc = serve.runtime.service("tasks")
        task = svc.store.get(task_id)
        assert (task.message, task.origin, task.wake_source) == ('deploy atomic at abc123 (["v1","v2"])', "webhook",
                                                                 "webhook")
        drained = serve.call(lambda: asyncio.run_coroutine_threadsafe(svc.runner.run_due(), serve.loop))
        assert drained.result(WAIT_S).claimed == 1
        done = svc.store.get(task_id)
        assert done.status == "completed" and users(serve.runtime, done.session_id) == [task.message]
    finally:
        serve.stop()


def test_bad_credentials_are_401_and_unknown_names_404_and_nothing_is_created(tmp_path: Path):
    serve = _serve(tmp_path)
    try:
        base = serve.base_url
        body = b'{"repo": {"name": "x"}, "sha": "1", "tags": []}'
        signed = _signed(body)
        cases = [
            ({}, 401),
            ({"X-Webhook-Secret": "wrong"}, 401),
            ({"X-Webhook-Secret": ENV["HOOK_SECRET"]}, 401),  # the signature is missing
            ({"X-Webhook-Secret": ENV["HOOK_SECRET"], **_signed(body, "other")}, 401),
            (signed, 401),  # the secret is missing
        ]
        for headers, status in cases:
            answer = _post(base, "deploy", body, **headers)
            assert answer.status_code == status, (headers, answer.text)
            assert answer.json()["error"]["code"] == "invalid_webhook_credentials"
        assert _post(base, "open", b'{"x": 1}').status_code == 401  # an endpoint without credentials never accepts
        assert _post(base, "nope", body, **{"X-Webhook-Secret": ENV["HOOK_SECRET"]}).status_code == 404
        assert serve.runtime.service("tasks").store.list() == []
    finally:
        serve.stop()


def test_bad_bodies_get_clear_errors_and_create_nothing(tmp_path: Path):
    serve = _serve(tmp_path)
    try:
        base = serve.base_url
        secret = {"X-Webhook-Secret": ENV["HOOK_SECRET"]}

        def signed(body: bytes) -> dict[str, str]:
            return {**secret, **_signed(body)}

        huge = b'{"x": "' + b"a" * (10 * 1024 * 1024) + b'"}'
        too_big = _post(base, "deploy", huge, **signed(huge))
        assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "body_too_large"
        not_json = b"repo=atomic"
        assert _post(base, "deploy", not_json, **signed(not_json)).json()["error"]["code"] == "invalid_json"
        missing = b'{"repo": {}, "sha": "1", "tags": []}'
        answer = _post(base, "deploy", missing, **signed(missing))
        assert answer.status_code == 422 and answer.json()["param"] == "body.repo.name"
        assert serve.runtime.service("tasks").store.list() == []
    finally:
        serve.stop()


def test_a_persistent_webhook_reuses_one_session_and_a_new_one_gets_its_own(tmp_path: Path):
    serve = _serve(tmp_path)
    try:
        base = serve.base_url
        secret = {"X-Webhook-Secret": ENV["HOOK_SECRET"]}
        first = _post(base, "alerts", b'{"text": "disk full"}', **secret).json()
        second = _post(base, "alerts", b'{"text": "disk ok"}', **secret).json()
        assert first["sessionId"] and first["sessionId"] == second["sessionId"]
        body = b'{"repo": {"name": "a"}, "sha": "1", "tags": []}'
        fresh = _post(base, "deploy", body, **secret, **_signed(body)).json()
        assert fresh["sessionId"] is None  # a fresh session is made when it runs
    finally:
        serve.stop()
