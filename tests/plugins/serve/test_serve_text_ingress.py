"""Serve: a lone surrogate in a message crashed the turn (500
`turn_crashed`) and left an empty session behind. Invalid text is now refused with 400
`invalid_text` before anything is written; and for any text or bytes at all, a 200 means
the message was durably admitted, exactly as sent (Hypothesis)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings

from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.serve.serve_harness import ServeHarness
from tests.turns.ingress_texts import admitted_texts, byte_strings, session_count, texts

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _post(harness: ServeHarness, raw: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{harness.base_url}/v1/chat/completions", content=raw, timeout=60,
                      headers={"content-type": "application/json", **(headers or {})})


def test_a_lone_surrogate_is_refused_with_400_and_leaves_no_session(tmp_path: Path) -> None:
    harness = ServeHarness(tmp_path, ScriptedProvider())
    try:
        raw = b'{"messages": [{"role": "user", "content": "caf\\udcff"}]}'
        response = _post(harness, raw)
        stream = _post(harness, raw.replace(b"{", b'{"stream": true, ', 1))
        steer_session = httpx.post(f"{harness.base_url}/api/sessions", json={}).json()["id"]
        steer = httpx.post(f"{harness.base_url}/api/sessions/{steer_session}/steer",
                           content=b'{"text": "\\ud800"}', headers={"content-type": "application/json"})
        titled = httpx.post(f"{harness.base_url}/api/sessions", content=b'{"title": "\\udfff"}',
                            headers={"content-type": "application/json"})
    finally:
        harness.stop()
    for refused in (response, stream):
        assert refused.status_code == 400, refused.text
        assert refused.json()["error"]["code"] == "invalid_text" and "U+DCFF" in refused.json()["error"]["message"]
    assert steer.status_code in (400, 409) and titled.status_code == 400
    assert admitted_texts(tmp_path / "state") == []
    assert session_count(tmp_path / "state") == 1  # only the one the steer test made on purpose


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[ServeHarness]:
    """One server per test function: Hypothesis runs every example against it."""
    harness = ServeHarness(tmp_path, ScriptedProvider())
    yield harness
    harness.stop()


@given(text=texts)
@SETTINGS
def test_for_any_text_a_200_means_durably_admitted_as_sent(serve: ServeHarness, tmp_path: Path, text: str) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": text}]}).encode()
    # what the JSON says: an escaped surrogate pair ("\ud800\udc00") is one astral character
    _check(serve, tmp_path, body, json.loads(body)["messages"][0]["content"])


@given(raw=byte_strings)
@SETTINGS
def test_for_any_bytes_a_200_means_durably_admitted_as_sent(serve: ServeHarness, tmp_path: Path, raw: bytes) -> None:
    body = b'{"messages": [{"role": "user", "content": "' + raw + b'"}]}'
    try:
        text = json.loads(body)["messages"][0]["content"]
    except (ValueError, UnicodeDecodeError):
        text = None
    _check(serve, tmp_path, body, text)


def _check(harness: ServeHarness, tmp_path: Path, body: bytes, text: str | None) -> None:
    state = tmp_path / "state"
    before_turns, before_sessions = admitted_texts(state), session_count(state)
    response = _post(harness, body)
    after_turns = admitted_texts(state)
    if response.status_code == 200:
        ledger_turn = response.headers["x-atomic-ledger-turn"]
        assert ledger_turn and text is not None
        assert after_turns == [*before_turns, text]  # the exact text, durable by the time 200 was sent
    else:
        assert response.status_code in (400, 413), response.text
        assert response.headers["content-type"].startswith("application/json")
        assert after_turns == before_turns and session_count(state) == before_sessions
