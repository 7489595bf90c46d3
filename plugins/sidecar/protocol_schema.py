"""The published protocol: version, request/event names, and the JSON Schema shipped with the package.

The schema file is the single source of truth for message shapes; the router validates
incoming requests against it and the test suite validates every outgoing line.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

PROTOCOL_VERSION = 1
SCHEMA_FILE = "sidecar-protocol.v1.schema.json"

REQUEST_TYPES = ("hello", "get_capabilities", "create_session", "list_sessions", "load_session", "delete_session",
                 "send_message", "steer_message", "abort", "approval_response", "question_response", "approval_list",
                 "set_approval_level", "mcp_list", "mcp_add",
                 "mcp_remove", "telegram_status", "telegram_control", "task_list", "task_show", "task_create",
                 "task_cancel", "memory_phases", "memory_embeddings", "memory_links", "shutdown")


def schema_path() -> Path:
    """Where the schema file lives inside the installed package."""
    return Path(__file__).resolve().parent / "protocol" / SCHEMA_FILE


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    return json.loads(schema_path().read_text(encoding="utf-8"))


def event_types() -> list[str]:
    return list(load_schema()["$defs"]["event"]["properties"]["type"]["enum"])


@lru_cache(maxsize=None)
def _validator(pointer: str) -> Any:
    import jsonschema

    schema = load_schema()
    sub = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": pointer}
    return jsonschema.Draft202012Validator(sub)


def request_problem(request_type: str, message: dict[str, Any]) -> str | None:
    """Why `message` is not a valid `request_type` request (one sentence), or None."""
    import jsonschema

    errors = list(_validator(f"#/$defs/requests/{request_type}").iter_errors(message))
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    where = ".".join(str(p) for p in best.absolute_path)
    return f"{request_type}: {where + ': ' if where else ''}{best.message}"


def outgoing_problem(message: dict[str, Any]) -> str | None:
    """Why a line the sidecar writes breaks the schema (used by tests and the debug switch)."""
    import jsonschema

    errors = list(_root_validator().iter_errors(message))
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    return f"{'.'.join(str(p) for p in best.absolute_path) or '<root>'}: {best.message}"


@lru_cache(maxsize=1)
def _root_validator() -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema())
