"""Sidecar: a lone surrogate was acknowledged `ok: true` with a turn id,
then the turn crashed and nothing was ever written — the one promise broken. Now it is
refused (`invalid_text`) before anything is written, and for any text or bytes at all,
`ok: true` means the message is durably admitted exactly as sent (Hypothesis)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings

from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.sidecar.sidecar_harness import SidecarHarness
from tests.turns.ingress_texts import admitted_texts, byte_strings, session_count, texts

SETTINGS = settings(max_examples=50, deadline=None)


async def test_a_lone_surrogate_is_refused_before_anything_is_acknowledged(tmp_path: Path) -> None:
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    refused = await sidecar.line(b'{"id": 1, "type": "send_message", "text": "caf\\udcff"}')
    titled = await sidecar.line(b'{"id": 2, "type": "create_session", "title": "\\ud800"}')
    session = (await sidecar.ok("create_session"))["session"]["id"]
    steered = await sidecar.line(json.dumps({"id": 3, "type": "steer_message", "sessionId": session}).encode()
                                 .replace(b"}", b', "text": "\\udfff"}'))
    await sidecar.close()
    assert refused["ok"] is False and refused["error"]["code"] == "invalid_text"
    assert "U+DCFF" in refused["error"]["message"]
    assert titled["ok"] is False and titled["error"]["code"] == "invalid_text"
    assert steered["ok"] and steered["result"] == {"steered": False, "outcome": "invalid_text"}
    assert admitted_texts(tmp_path / "state") == [] and session_count(tmp_path / "state") == 1


def _send(line: bytes) -> tuple[dict, list[str], int]:
    """Feed one send_message line to a fresh sidecar; its response and what became durable."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        async def go() -> dict:
            sidecar = SidecarHarness(root, ScriptedProvider())
            try:
                return await sidecar.line(line)
            finally:
                await sidecar.close()

        response = asyncio.run(go())
        return response, admitted_texts(root / "state"), session_count(root / "state")


def _check(line: bytes, expected: str | None) -> None:
    response, admitted, sessions = _send(line)
    if response["ok"]:
        assert expected is not None and response["result"]["turnId"]
        assert admitted == [expected]  # acknowledged => durably admitted, as sent
    else:
        assert response["error"]["code"] in ("invalid_text", "parse_error", "invalid_request"), response
        assert admitted == [] and sessions == 0  # refused => nothing written, not even a session


@given(text=texts)
@SETTINGS
def test_for_any_text_ok_means_durably_admitted_as_sent(text: str) -> None:
    line = json.dumps({"id": 1, "type": "send_message", "text": text}).encode()
    _check(line, json.loads(line)["text"])


@given(raw=byte_strings)
@SETTINGS
def test_for_any_bytes_ok_means_durably_admitted_as_sent(raw: bytes) -> None:
    line = b'{"id": 1, "type": "send_message", "text": "' + raw + b'"}'
    try:
        expected = json.loads(line)["text"]
    except (ValueError, UnicodeDecodeError, TypeError):
        expected = None
    _check(line, expected)
