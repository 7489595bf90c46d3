"""`claude` (Claude Code) in its documented headless mode.

`--print` answers once and exits, reading the prompt from stdin. `--tools ""` removes
every built-in tool and `--strict-mcp-config` (with no `--mcp-config`) loads no MCP
server, so the child agent cannot touch files or the operator's MCP servers outside
atomic-agent's approval ladder. Never `--bare`: it skips OAuth and the keychain, which
is the sign-in this provider relies on.
"""

from __future__ import annotations

import json
from typing import Any

from .cli_descriptor import CliAdapterDescriptor, CliAnswer, CliOptions


def claude_argv(executable: str, options: CliOptions) -> list[str]:
    argv = [executable, "--print", "--tools", "", "--strict-mcp-config"]
    if options.stream:
        argv += ["--output-format", "stream-json", "--verbose", "--include-partial-messages"]
    else:
        argv += ["--output-format", "json"]
    if options.model:
        argv += ["--model", options.model]
    return argv


def _usage(result: dict[str, Any]) -> dict[str, Any]:
    usage = raw_usage if isinstance(raw_usage := result.get("usage"), dict) else {}
    cached = int(usage.get("cache_read_input_tokens") or 0)
    prompt = int(usage.get("input_tokens") or 0) + cached + int(usage.get("cache_creation_input_tokens") or 0)
    out: dict[str, Any] = {"promptTokens": prompt, "completionTokens": int(usage.get("output_tokens") or 0),
                           "cachedTokens": cached}
    if isinstance(result.get("total_cost_usd"), (int, float)):
        # a flat-rate subscription pays nothing per call; this is the CLI's API-price estimate
        out["notionalCostUsd"] = float(result["total_cost_usd"])
    return out


def _objects(stdout: str) -> list[dict[str, Any]]:
    text = stdout.strip()
    try:
        whole = json.loads(text)
        return [whole] if isinstance(whole, dict) else [o for o in whole if isinstance(o, dict)]
    except ValueError:
        pass
    found = []
    for line in text.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def parse_claude_output(stdout: str) -> CliAnswer:
    """The `result` object of `--output-format json` (or the last one of stream-json)."""
    results = [o for o in _objects(stdout) if o.get("type") == "result"]
    if not results:
        return CliAnswer("", is_error=True, error=f"claude printed no result object: {stdout.strip()[:200]!r}")
    result = results[-1]
    text = raw_text if isinstance(raw_text := result.get("result"), str) else ""
    if result.get("is_error") or (result.get("subtype") not in (None, "success")):
        return CliAnswer(text, _usage(result), True, text or str(result.get("subtype")))
    return CliAnswer(text, _usage(result))


def claude_stream_delta(line: str) -> str:
    """Text of a `stream_event` content_block_delta line (from --include-partial-messages)."""
    if not line.startswith("{"):
        return ""
    try:
        obj = json.loads(line)
    except ValueError:
        return ""
    event = obj.get("event") if obj.get("type") == "stream_event" else None
    delta = event.get("delta") if isinstance(event, dict) and event.get("type") == "content_block_delta" else None
    if isinstance(delta, dict) and delta.get("type") == "text_delta" and isinstance(delta.get("text"), str):
        return delta["text"]
    return ""


CLAUDE = CliAdapterDescriptor(
    name="claude",
    executable="claude",
    build_argv=claude_argv,
    parse_output=parse_claude_output,
    stream_delta=claude_stream_delta,
    sign_in_hint="Run `claude` once in a terminal and sign in (/login) with your Claude subscription; "
                 "atomic-agent uses that sign-in and never reads its tokens.",
    auth_wording=("/login", "not logged in", "log in", "login", "invalid api key", "authentication", "oauth",
                  "unauthorized", "credit balance"),
    context_window=200_000,
)
