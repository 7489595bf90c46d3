"""Shared pieces of the turn-lifecycle tests: a provider that answers the latest user message,
and a way to play a process that died mid-turn."""

from __future__ import annotations

import re
from typing import Any

from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls


def latest_user_text(prompt: str) -> str:
    found = re.findall(r"^user: (.*)$", prompt, flags=re.M)
    return found[-1] if found else ""


def answering(request: Any) -> str:
    """Reply `re: <latest user text>`; `slow ...` reads a 300 ms file first (or, when the test's
    ToolLog holds that text, one read until released), `hang ...` a 60 s one."""
    prompt = request.prompt
    last = latest_user_text(prompt)
    after_user = prompt[prompt.rfind(f"user: {last}"):]
    if "tool_result[" not in after_user:
        if last.startswith("slow"):
            return calls(("t.read", {"path": last, "ms": 300}))
        if last.startswith("hang"):
            return calls(("t.read", {"path": last, "ms": 60_000}))
    return calls(("reply", {"text": f"re: {last}"}))


def answering_provider() -> ScriptedProvider:
    return ScriptedProvider([], default=answering)  # type: ignore[arg-type]


def replies(runtime: Runtime, session_id: str) -> list[str]:
    return [e.text for e in runtime.sessions.load(session_id).entries if e.kind == "assistant_reply"]


def users(runtime: Runtime, session_id: str) -> list[str]:
    return [e.text for e in runtime.sessions.load(session_id).entries if e.kind == "user"]


def play_dead(runtime: Runtime) -> None:
    """What the kernel does for a killed process: its owner lock is gone. The tasks it left
    are zombies; the test decides when to let them try to write again."""
    runtime.lifecycle.lease.release()
