"""Invariant: a webhook call creates at most one task, however it is replayed or retried.

A captured signed call replays to nothing (409, in any spelling, after a restart too); a
stale or oddly spelled timestamp is refused; `Idempotency-Key` answers a retry with the
first task; GitHub's signature shape is accepted once per delivery; a body nested too
deep is a clear 400, never a 500."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
import pytest

import atomic_agent.plugins.serve as http_plugin
import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.config.config_file import CONFIG_VERSION
from atomic_agent.plugins.serve.webhook_auth import MAX_AGE_S, MAX_FUTURE_S, check_credentials, signature_for
from tests.agent.loop_harness import make_runtime
from tests.plugins.serve.serve_harness import ServeHarness
from tests.plugins.tasks.task_kit import TEST_TASKS_CONFIG
from tests.turns.turn_kit import answering_provider

ENV = {"HOOK_HMAC": "hmac-key-value", "HOOK_SECRET": "s3cret-value", "ATOMIC_AGENT_API_KEY": "bearer-key"}
ENDPOINTS = {
    "signed": {"messageTemplate": "build {{body.n}}", "hmacSecretEnv": "HOOK_HMAC"},
    "shared": {"messageTemplate": "alert {{body.n}}", "secretEnv": "HOOK_SECRET"},
    "raw": {"messageTemplate": "raw event", "hmacSecretEnv": "HOOK_HMAC"},
}
KEY = ENV["HOOK_HMAC"]


def _serve(tmp_path: Path) -> ServeHarness:
    state = tmp_path / "state"
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "tasks": TEST_TASKS_CONFIG,
                                                   "webhooks": {"endpoints": ENDPOINTS}}))

    def factory(ask):
        return make_runtime(tmp_path, answering_provider(), ask=ask, environ=dict(ENV),
                            extra=[(http_plugin, "http"), (tasks_plugin, "tasks")])

    return ServeHarness(tmp_path, runtime_factory=factory, api_key="bearer-key")


def _signed(body: bytes, stamp: int | None = None) -> dict[str, str]:
    text = str(int(time.time()) if stamp is None else stamp)
    return {"X-Atomic-Timestamp": text, "X-Webhook-Signature": signature_for(KEY, body, text)}


def _github(body: bytes, delivery: str | None = None) -> dict[str, str]:
    return {"X-Hub-Signature-256": signature_for(KEY, body), "X-GitHub-Delivery": delivery or str(uuid.uuid4())}


def _post(serve: ServeHarness, name: str, body: bytes, headers: dict[str, str]) -> httpx.Response:
    return httpx.post(f"{serve.base_url}/api/webhooks/{name}", content=body,
                      headers={"Content-Type": "application/json", **headers})


def _task_count(serve: ServeHarness) -> int:
    return len(serve.runtime.service("tasks").store.list())


@pytest.fixture()
def serve(tmp_path: Path):
    harness = _serve(tmp_path)
    yield harness
    harness.stop()


def test_a_replayed_signed_call_creates_nothing_whatever_its_spelling(serve: ServeHarness):
    body = b'{"n": 1}'
    headers = _signed(body)
    assert _post(serve, "signed", body, headers).status_code == 202
    signature = headers["X-Webhook-Signature"]
    replays = [
        headers,
        {**headers, "X-Webhook-Signature": signature.upper().replace("SHA256=", "sha256=")},
        {**headers, "X-Webhook-Signature": signature.upper()},
        {**headers, "Idempotency-Key": str(uuid.uuid4())},  # an unsigned fresh key does not make it new
        {**headers, "X-Webhook-Secret": "ignored-extra-header"},
    ]
    for replay in replays:
        answer = _post(serve, "signed", body, replay)
        assert answer.status_code == 409, (replay, answer.text)
        assert answer.json()["error"]["code"] == "webhook_replayed"
    assert _task_count(serve) == 1
    assert _post(serve, "signed", body, _signed(body, int(time.time()) + 1)).status_code == 202  # signed anew


def test_a_replay_is_still_refused_after_a_restart(tmp_path: Path):
    body = b'{"n": 2}'
    headers, hub = _signed(body), _github(b'{"n": 3}')
    first = _serve(tmp_path)
    try:
        assert _post(first, "signed", body, headers).status_code == 202
        assert _post(first, "raw", b'{"n": 3}', hub).status_code == 202
    finally:
        first.stop()
    second = _serve(tmp_path)
    try:
        assert _post(second, "signed", body, headers).status_code == 409
        assert _post(second, "raw", b'{"n": 3}', hub).status_code == 409
        assert _task_count(second) == 2
    finally:
        second.stop()


@pytest.mark.parametrize("stamp", [
    lambda now: str(now - MAX_AGE_S - 5),  # stale
    lambda now: str(now + MAX_FUTURE_S + 30),  # from the future
    lambda now: "+" + str(now),
    lambda now: str(now) + ".0",
    lambda now: "1.7e9",
    lambda now: "".join(chr(0xFF10 + int(d)) for d in str(now)),  # fullwidth digits
    lambda now: "-1",
    lambda now: "",
    lambda now: "9" * 40,
])
def test_a_stale_or_misspelled_timestamp_is_refused(stamp):
    now = int(time.time())
    body = b'{"n": 1}'
    text = stamp(now)
    try:
        signature = signature_for(KEY, body, text)
    except UnicodeEncodeError:
        signature = signature_for(KEY, body, str(now))
    check = check_credentials({"x-atomic-timestamp": [text], "x-webhook-signature": [signature]}, body, None, KEY,
                              float(now))
    assert not check.ok and check.marks == ()
    assert check.code in ("stale_webhook_timestamp", "invalid_webhook_credentials")
    assert "x-atomic-timestamp" in check.problem.lower() or "timestamp" in check.problem


def test_the_exact_recipe_is_accepted_and_a_body_only_signature_is_not():
    now = int(time.time())
    body = b'{"n": 1}'
    good = check_credentials({"x-atomic-timestamp": [str(now)],
                              "x-webhook-signature": [signature_for(KEY, body, str(now))]}, body, None, KEY, now)
    assert good.ok and good.marks and good.keep_until and good.keep_until > now + MAX_AGE_S
    body_only = check_credentials({"x-webhook-signature": [signature_for(KEY, body)]}, body, None, KEY, now)
    assert not body_only.ok and "X-Atomic-Timestamp".lower() in body_only.problem.lower()
    # the timestamp is part of what is signed: moving it invalidates the signature
    moved = check_credentials({"x-atomic-timestamp": [str(now + 1)],
                               "x-webhook-signature": [signature_for(KEY, body, str(now))]}, body, None, KEY, now)
    assert not moved.ok
    doubled = check_credentials({"x-atomic-timestamp": [str(now), str(now)],
                                 "x-webhook-signature": [signature_for(KEY, body, str(now))]}, body, None, KEY, now)
    assert not doubled.ok and "more than once" in doubled.problem


def test_stale_calls_over_http_create_nothing(serve: ServeHarness):
    body = b'{"n": 5}'
    old = _post(serve, "signed", body, _signed(body, int(time.time()) - MAX_AGE_S - 60))
    assert old.status_code == 401 and old.json()["error"]["code"] == "stale_webhook_timestamp"
    bare = _post(serve, "signed", body, {"X-Webhook-Signature": signature_for(KEY, body)})
    assert bare.status_code == 401 and "X-Atomic-Timestamp" in bare.json()["error"]["message"]
    assert _task_count(serve) == 0


def test_an_idempotency_key_answers_a_retry_with_the_first_task(serve: ServeHarness):
    body = b'{"n": 7}'
    key = {"Idempotency-Key": "delivery-7"}
    original = {**_signed(body), **key}
    first = _post(serve, "signed", body, original)
    assert first.status_code == 202
    retries = [
        {**_signed(body, int(time.time()) + 1), **key},  # signed again, as a retrying sender does
        original,  # the very same call resent: the key is looked up before the replay check
    ]
    for headers in retries:
        again = _post(serve, "signed", body, headers)
        assert again.status_code == 202 and again.json() == first.json(), again.text
        assert again.headers["Idempotent-Replayed"] == "true"
    other = b'{"n": 8}'
    clash = _post(serve, "signed", other, {**_signed(other), **key})
    assert clash.status_code == 422 and clash.json()["error"]["code"] == "idempotency_key_reused"
    # the key is per endpoint, and works on a shared-secret endpoint (which cannot stop a replay by itself)
    secret = {"X-Webhook-Secret": ENV["HOOK_SECRET"], **key}
    alert = _post(serve, "shared", body, secret)
    assert alert.status_code == 202 and alert.json()["taskId"] != first.json()["taskId"]
    assert _post(serve, "shared", body, secret).json() == alert.json()
    assert _task_count(serve) == 2


def test_github_signatures_are_accepted_once_per_delivery(serve: ServeHarness):
    body = b'{"action": "opened"}'
    hub = _github(body)
    assert _post(serve, "raw", body, hub).status_code == 202
    other = b'{"action": "closed"}'
    refusals = [
        (body, hub, 409),  # the same delivery again
        (body, {**hub, "X-GitHub-Delivery": str(uuid.uuid4())}, 409),  # a new (unsigned) id on the same signed body
        (other, {**_github(other), "X-GitHub-Delivery": hub["X-GitHub-Delivery"]}, 409),  # the same id, another body
        (other, {**_github(other), "X-GitHub-Delivery": hub["X-GitHub-Delivery"].upper()}, 409),
        (other, {"X-Hub-Signature-256": signature_for(KEY, other)}, 401),  # no delivery id
        (other, {**_github(other), "X-GitHub-Delivery": "../../etc"}, 401),
        (other, {**_github(other), **_signed(other)}, 401),  # two signature shapes at once
        (other, {"X-Hub-Signature-256": signature_for("wrong", other), "X-GitHub-Delivery": str(uuid.uuid4())}, 401),
    ]
    for payload, headers, status in refusals:
        answer = _post(serve, "raw", payload, headers)
        assert answer.status_code == status, (headers, answer.text)
    assert _post(serve, "raw", other, _github(other)).status_code == 202
    assert _task_count(serve) == 2


@pytest.mark.parametrize("depth", [65, 1000, 100_000])
def test_a_deeply_nested_body_is_a_clear_400(serve: ServeHarness, depth: int):
    body = ('{"n": ' + "[" * depth + "1" + "]" * depth + "}").encode()
    answer = _post(serve, "signed", body, _signed(body))
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["code"] == "invalid_json" and "nested" in answer.json()["error"]["message"]
    assert _task_count(serve) == 0
