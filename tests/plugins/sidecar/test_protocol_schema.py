"""The published schema is valid, ships inside the package, and agrees with the code and the
documentation page on every request and event name."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema

from atomic_agent.plugins.sidecar.protocol_router import HANDLERS
from atomic_agent.plugins.sidecar.protocol_schema import REQUEST_TYPES, event_types, load_schema, schema_path

DOCS = Path(__file__).resolve().parents[3] / "docs" / "sidecar-protocol.md"


def test_schema_is_valid_draft_2020_12_and_versioned():
    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["x-protocolVersion"] == 1 and schema_path().name.endswith(".v1.schema.json")


def test_schema_file_lives_in_the_plugin_package():
    import atomic_agent.plugins.sidecar as sidecar

    assert schema_path().parent.parent == Path(sidecar.__file__).resolve().parent


def test_every_request_type_has_a_schema_and_a_handler():
    schema = load_schema()
    assert set(schema["$defs"]["requests"]) == set(REQUEST_TYPES) == set(HANDLERS)
    assert schema["$defs"]["request"]["properties"]["type"]["enum"] == list(REQUEST_TYPES)


def test_docs_describe_every_request_and_event():
    text = DOCS.read_text()
    for name in [*REQUEST_TYPES, *event_types()]:
        assert re.search(rf"`{name}`", text), f"docs/sidecar-protocol.md does not mention {name}"


def test_a_batch_of_one_must_not_carry_batch_fields():
    validator = jsonschema.Draft202012Validator(load_schema())
    base = {"type": "tool_call_started", "sessionId": "s", "turnId": "turn_ab", "turnIndex": 0, "step": 0,
            "tool": "t", "args": {}}
    assert validator.is_valid({"type": "event", "event": base})
    assert validator.is_valid({"type": "event", "event": {**base, "batchIndex": 1, "batchSize": 2}})
    assert not validator.is_valid({"type": "event", "event": {**base, "batchIndex": 0, "batchSize": 1}})
    assert not validator.is_valid({"type": "event", "event": {**base, "batchIndex": 0}})


def test_requests_are_validated_by_the_same_schema():
    validator = jsonschema.Draft202012Validator({**load_schema(), "oneOf": [{"$ref": "#/$defs/request"}]})
    assert validator.is_valid({"id": 1, "type": "steer_message", "sessionId": "s", "text": "x"})
    assert not validator.is_valid({"id": 1, "type": "steer_message", "sessionId": "s"})
    assert not validator.is_valid({"id": 1, "type": "approval_response", "approvalId": "apr_1"})
