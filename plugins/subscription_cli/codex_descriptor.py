"""`codex exec` (OpenAI Codex CLI) in its documented non-interactive mode.

`-` as the prompt argument makes it read the prompt from stdin. `--sandbox read-only`
and `--ignore-user-config` confine the child (it cannot write, and the operator's own
config, MCP servers included, is not loaded) — the CLI offers no switch that removes its
tools outright. `--json` prints one event per line. Codex exits 0 even when it stopped
reading stdin early, which is why the runner reports truncated input separately.
"""

from __future__ import annotations

import json
from typing import Any

from .cli_descriptor import CliAdapterDescriptor, CliAnswer, CliOptions


def codex_argv(executable: str, options: CliOptions) -> list[str]:
    argv = [executable, "exec", "--json", "--sandbox", "read-only", "--skip-git-repo-check", "--ignore-user-config"]
    if options.model:
        argv += ["--model", options.model]
    return argv + ["-"]


def _events(stdout: str) -> list[dict[str, Any]]:
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            events.append(obj)
    return events


def _message_text(event: dict[str, Any]) -> str | None:
    item = event.get("item") if event.get("type") == "item.completed" else None
    if isinstance(item, dict) and (item.get("type") or item.get("item_type")) in ("agent_message", "assistant_message"):
        text = item.get("text")
        return text if isinstance(text, str) else None
    return None


def parse_codex_output(stdout: str) -> CliAnswer:
    text, usage, error = None, {}, ""
    for event in _events(stdout):
        message = _message_text(event)
        if message is not None:
            text = message  # the last agent message is the answer
        kind = event.get("type")
        if kind == "turn.completed" and isinstance(event.get("usage"), dict):
            raw = event["usage"]
            usage = {"promptTokens": int(raw.get("input_tokens") or 0),
                     "completionTokens": int(raw.get("output_tokens") or 0),
                     "cachedTokens": int(raw.get("cached_input_tokens") or 0)}
        elif kind in ("turn.failed", "error"):
            detail = raw_detail if isinstance(raw_detail := event.get("error"), dict) else event
            error = str(detail.get("message") or detail)
    if error:
        return CliAnswer(text or "", usage, True, error)
    if text is None:
        return CliAnswer("", usage, True, f"codex printed no agent message: {stdout.strip()[:200]!r}")
    return CliAnswer(text, usage)


def codex_stream_delta(line: str) -> str:
    """Codex emits whole messages, not token deltas: each completed agent message is one delta."""
    try:
        obj = json.loads(line) if line.startswith("{") else None
    except ValueError:
        return ""
    return (_message_text(obj) or "") if isinstance(obj, dict) else ""


CODEX = CliAdapterDescriptor(
    name="codex",
    executable="codex",
    build_argv=codex_argv,
    parse_output=parse_codex_output,
    stream_delta=codex_stream_delta,
    sign_in_hint="Run `codex login` once and sign in with your ChatGPT plan; atomic-agent uses that sign-in "
                 "and never reads its tokens.",
    auth_wording=("codex login", "not logged in", "login", "unauthorized", "401", "authentication"),
)
