"""Rebuild a session's framed stable prefix from the current runtime (for `trace replay`).

The tools, templates, capabilities and config are today's; the model profile and framing
are the ones the trace recorded, so a drift means the upper prompt changed, not that the
server is down.
"""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.llm.model_profile import ModelProfile, profile_named


def recorded_profile(state_dir: Path, session_id: str) -> ModelProfile:
    path = state_dir / "traces" / f"{session_id}.ndjson"
    name, framing = "plain", "text"
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("type") == "prompt_captured" and event.get("profile"):
                name, framing = event["profile"], event.get("framing", "text")
    return profile_named(name, chatml=framing == "chatml")


def rebuild_stable_prefix(state_dir: Path, session_id: str) -> str:
    from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    runtime = Runtime(boot(state_dir))
    try:
        session = runtime.sessions.load(session_id)
        prefix = build_stable_prefix(runtime.prompt_assets.env(), runtime.registry,
                                     default_capabilities(session.working_dir),
                                     max_calls=runtime.config.agent.max_parallel_tool_calls)
    finally:
        if runtime._sessions is not None:
            runtime._sessions.close()
    return recorded_profile(state_dir, session_id).frame_stable_prefix(prefix)
