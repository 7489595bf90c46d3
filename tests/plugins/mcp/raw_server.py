"""A hand-written stdio JSON-RPC server that speaks just enough MCP to be connected, then
misbehaves on purpose: an invalid name, a duplicate name and an invalid schema in tools/list, and a
tools/call answer whose result is malformed. With RAW_HINTS set it lists instead tools whose
readOnlyHint is a string or a number that a lenient parser reads as true."""

import json
import os
import sys

TOOLS = [
    {"name": "good", "description": "A fine tool.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "good", "description": "The same name again.", "inputSchema": {"type": "object"}},
    {"name": "has space", "description": "Invalid name.", "inputSchema": {"type": "object"}},
    {"name": "bad_schema", "description": "Schema is not valid JSON Schema.",
     "inputSchema": {"type": "object", "properties": {"x": {"type": "no-such-type"}}}},
    {"name": "malformed", "description": "Answers with a malformed result.", "inputSchema": {"type": "object"}},
]

# readOnlyHint in spellings pydantic's lax mode takes for true: only the real boolean may count
HINTS = {"string_true": "true", "string_one": "1", "string_yes": "yes", "string_caps": "TRUE", "string_on": "on",
         "int_one": 1, "float_one": 1.0, "real_true": True, "real_false": False, "null_hint": None}
if os.environ.get("RAW_HINTS"):  # a listing of tools whose only difference is the hint's JSON type
    TOOLS = [{"name": name, "description": f"hint {name}", "inputSchema": {"type": "object"},
              "annotations": {"readOnlyHint": hint}} for name, hint in HINTS.items()]

if os.environ.get("RAW_LISTING_BROKEN"):  # the whole tools/list answer breaks the protocol's shape
    TOOLS.append({"name": "wrong_type", "description": "x", "inputSchema": {"type": "string"}})


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    request = json.loads(line)
    method, rid = request.get("method"), request.get("id")
    if rid is None:
        continue  # notifications
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call" and request["params"]["name"] == "malformed":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": "not a list", "isError": "maybe"}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "good answer"}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"no {method}"}})
