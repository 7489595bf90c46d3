"""Bad input gets one clear error response and the sidecar keeps serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.sidecar.line_reader import LineSplitter, LineTooLong
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.sidecar.sidecar_harness import SidecarHarness


@pytest.fixture
async def sidecar(tmp_path: Path):
    harness = SidecarHarness(tmp_path, ScriptedProvider())
    yield harness
    await harness.close()


async def test_malformed_json_gets_a_parse_error_with_null_id(sidecar):
    response = await sidecar.line(b'{"id": 1, "type": "hello"')
    assert response["ok"] is False and response["id"] is None
    assert response["error"]["code"] == "parse_error"
    assert "not valid JSON" in response["error"]["message"]
    assert (await sidecar.request("hello"))["ok"]  # still serving


async def test_non_object_line_is_an_invalid_request(sidecar):
    response = await sidecar.line(b"[1, 2, 3]")
    assert response["error"]["code"] == "invalid_request" and "JSON object" in response["error"]["message"]


async def test_request_without_id_is_answered_with_null_id(sidecar):
    response = await sidecar.line(b'{"type": "list_sessions"}')
    assert response["id"] is None and response["error"]["code"] == "invalid_request"
    assert "no usable id" in response["error"]["message"]


async def test_boolean_id_is_not_usable(sidecar):
    response = await sidecar.line(b'{"id": true, "type": "hello"}')
    assert response["id"] is None and response["error"]["code"] == "invalid_request"


async def test_unknown_request_type_names_the_known_ones(sidecar):
    response = await sidecar.line(b'{"id": "x", "type": "make_coffee"}')
    assert response["id"] == "x" and response["error"]["code"] == "unknown_request_type"
    assert "make_coffee" in response["error"]["message"] and "send_message" in response["error"]["message"]


async def test_schema_violation_names_the_field(sidecar):
    response = await sidecar.request("send_message", sessionId="abc")
    assert response["error"]["code"] == "invalid_request"
    assert "'text' is a required property" in response["error"]["message"]
    response = await sidecar.request("list_sessions", limit="ten")
    assert response["error"]["code"] == "invalid_request" and "limit" in response["error"]["message"]


async def test_non_utf8_line_is_a_parse_error(sidecar):
    response = await sidecar.line(b'{"id": 1, "type": "hello", "x": "\xff"}')
    assert response["error"]["code"] == "parse_error" and "UTF-8" in response["error"]["message"]


async def test_oversized_line_is_skipped_with_an_error(sidecar):
    response = await sidecar.line(LineTooLong(10 * 1024 * 1024))
    assert response["id"] is None and response["error"]["code"] == "line_too_long"
    assert "maxLineBytes" in response["error"]["message"]
    assert (await sidecar.request("get_capabilities"))["ok"]


async def test_blank_lines_are_ignored(sidecar):
    from atomic_agent.plugins.sidecar.protocol_router import handle_item

    await handle_item(sidecar.server, b"   ")
    assert sidecar.messages == []


async def test_unknown_session_ids_are_clear_errors(sidecar):
    for kind, fields in [("load_session", {}), ("delete_session", {}), ("steer_message", {"text": "x"}),
                         ("send_message", {"text": "x"}), ("abort", {})]:
        response = await sidecar.request(kind, sessionId="nope", **fields)
        assert response["error"]["code"] == "session_not_found", (kind, response)
        assert "'nope'" in response["error"]["message"]


async def test_protocol_version_mismatch_is_refused(sidecar):
    response = await sidecar.request("hello", protocolVersion=2)
    assert response["error"]["code"] == "unsupported_protocol_version"


def test_splitter_skips_a_ten_megabyte_line_and_keeps_the_next():
    splitter = LineSplitter(max_bytes=1024)
    out = []
    big = b"x" * (10 * 1024 * 1024)
    for i in range(0, len(big), 65536):
        out += splitter.feed(big[i:i + 65536])
    out += splitter.feed(b'\n{"id":1}\n{"id":')
    out += splitter.feed(b"2}")
    out += splitter.finish()
    assert out == [LineTooLong(10 * 1024 * 1024), b'{"id":1}', b'{"id":2}']


def test_splitter_allows_a_line_of_exactly_the_limit():
    splitter = LineSplitter(max_bytes=4)
    assert splitter.feed(b"abcd\nabcde\n") == [b"abcd", LineTooLong(5)]
