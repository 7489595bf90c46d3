"""What a POST /v1/chat/completions body asks for, checked.

The session already holds the conversation, so only the last user message is used: it
becomes the turn's text. System prompts, sampling knobs and client-side tools are the
agent's own business; `tools`/`functions`, `n > 1` and non-text content are refused with
an error that says so, everything else not listed here is ignored. `tool_choice` names one
of the agent's own tools (`{"type": "function", "function": {"name": "mcp.demo.ping"}}`):
the turn's first step must call it, as `atomic-agent run --tool-choice` does; `"auto"` is
the default, `"none"` and `"required"` are refused (the agent's reply is itself a tool call). Text that is not valid
Unicode (a lone surrogate escape such as `"\udcff"`) is refused with 400 `invalid_text`
before anything is written.
"""

from __future__ import annotations

from typing import Any

import attrs

from atomic_agent.api import text_problem
from atomic_agent.plugins.serve.error_envelope import ApiError


@attrs.frozen
class ChatRequest:
    text: str
    stream: bool
    model: str | None
    user: str | None
    tool_choice: str | None = None  # the tool the first step must call


def _bad(message: str, param: str) -> ApiError:
    return ApiError(400, f"{param}: {message}", code="invalid_value")


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for i, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise _bad(f"only text parts are supported, part {i} is {kind!r}", where)
            parts.append(part["text"])
        return "\n".join(parts)
    raise _bad("content must be a string or a list of text parts", where)


def _tool_choice(value: Any) -> str | None:
    """OpenAI's `tool_choice`, reduced to the one form the runtime has: a named tool."""
    if value is None or value == "auto":
        return None
    if value in ("none", "required"):
        raise _bad(f"{value!r} is not supported: the agent answers through its own tools (its reply is a tool call); "
                   "name one tool to force the first step with {\"type\": \"function\", \"function\": "
                   "{\"name\": \"TOOL\"}}, or send \"auto\"", "tool_choice")
    if isinstance(value, dict) and value.get("type") == "function" and isinstance(value.get("function"), dict):
        name = value["function"].get("name")
        if isinstance(name, str) and name.strip():
            return name.strip()
        raise _bad("function.name must be a non-empty tool name", "tool_choice")
    raise _bad("must be \"auto\" or {\"type\": \"function\", \"function\": {\"name\": \"TOOL\"}}",
               "tool_choice")


def parse_chat_request(body: dict[str, Any]) -> ChatRequest:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("a non-empty list of messages is required", "messages")
    last_user = None
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise _bad("every message needs a string 'role'", f"messages[{index}]")
        if message["role"] == "user":
            last_user = index
    if last_user is None:
        raise _bad("no message has role 'user'; the last user message is what the agent answers", "messages")
    text = _content_text(messages[last_user].get("content"), f"messages[{last_user}].content")
    problem = text_problem(text, f"messages[{last_user}].content")
    if problem is not None:  # checked before a session is resolved or anything is written
        raise ApiError(400, str(problem), code="invalid_text")
    if not text.strip():
        raise _bad("the last user message is empty", f"messages[{last_user}].content")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("must be true or false", "stream")
    if body.get("n") not in (None, 1):
        raise _bad("only n=1 is supported (one agent, one answer)", "n")
    if body.get("tools") or body.get("functions"):
        raise _bad("client-side tools are not supported: the agent runs its own tools under its approval gate",
                   "tools")
    model, user = body.get("model"), body.get("user")
    if model is not None and not isinstance(model, str):
        raise _bad("must be a string", "model")
    if user is not None and not isinstance(user, str):
        raise _bad("must be a string", "user")
    if user and text_problem(user, "user") is not None:  # it may name (and create) a session
        raise ApiError(400, str(text_problem(user, "user")), code="invalid_text")
    return ChatRequest(text=text, stream=stream, model=model, user=user or None,
                       tool_choice=_tool_choice(body.get("tool_choice")))
