"""`trace replay`: check a recorded session against today's prompt builder.

Two depths. `rebuild_stable_prefix` rebuilds one session's framed stable prefix (what the
hash-only check compares). `rerun_trace` re-executes the whole session in a scratch state
dir through the real runtime: the model is the recorded completions, answered in order, and
every tool call gets its recorded result instead of running (nothing touches the files,
network or servers the session touched). The rerun writes its own trace with the recording's
salt, and the two are compared step by step (replay_comparison): prompts byte for byte
(stable-prefix sections by salted hash, the tail verbatim), grammar, calls, results, turn ends.

What a rerun pins from the recording: the working dir, the model profile and framing, the
prompt style, the context window and answer budget, the grammar transport, the date the tail
shows. What it takes from today: the config, template overrides and plugins of `state_dir`,
the tools, templates and prompt builder. Plugin start-up (runtime_started: MCP servers,
channels) is skipped, so live tools are absent and a trace that called one is refused.
Memory sections are read from the scratch state, which starts empty.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from datetime import date
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.hook_records import ProviderCapabilities, ToolContext, ToolResult
from atomic_agent.llm.model_profile import profile_named
from atomic_agent.llm.provider_protocol import Completion, CompletionRequest
from atomic_agent.prompt.prompt_style import resolve_prompt_style
from atomic_agent.runtime.prompt_plan import PromptPlan, grammar_for
from atomic_agent.runtime.prompt_plan import rebuild_stable_prefix as rebuild_stable_prefix
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.prefix_hash import read_salt, salt_path
from atomic_agent.tracing.recorded_session import RecordedSession, UnreplayableTraceError, read_recorded_session
from atomic_agent.tracing.replay_comparison import Drift, compare_sessions
from atomic_agent.tracing.trace_paths import trace_path

# what a rerun copies from the state dir it checks: the config and the user's prompt overrides
COPIED_FILES = ("config.json",)
COPIED_DIRS = ("templates", "grammars")


@attrs.frozen
class RerunReport:
    session_id: str
    turns: int
    steps: int
    drifts: tuple[Drift, ...]

    @property
    def drifted(self) -> bool:
        return bool(self.drifts)

    @property
    def first(self) -> Drift | None:
        return self.drifts[0] if self.drifts else None

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "turns": self.turns, "steps": self.steps, "drifted": self.drifted,
                "drifts": [d.to_json() for d in self.drifts]}


class ReplayProvider:
    """Answers each step's request with the next recorded completion, in recording order.

    Running out means the rerun asked the model more often than the recording did (a
    decision changed); that is an error the turn reports, and the comparison names the step."""

    def __init__(self, recorded: RecordedSession, transport: str) -> None:
        self._answers = [c for step in recorded.steps for c in step.completions]
        self.capabilities = ProviderCapabilities(transport=transport, slot_affinity=False)
        self.mode = "replay"
        self.requests = 0

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        if not request.parts:
            # a plugin's own model call (memory reflection, a summary), not a step: the trace keeps no
            # completion for it, so it gets an empty answer (what it would have stored is not replayed)
            return Completion(content="", slot_id=request.slot_id)
        self.requests += 1
        if not self._answers:
            raise UnreplayableTraceError(f"the rerun asked for completion {self.requests}, but the recording has no "
                                         "more: the session's decisions changed")
        event = self._answers.pop(0)
        calls = event.get("toolCalls")
        completion = Completion(
            content=str(event.get("content", "")), stop=bool(event.get("stop", True)),
            stop_type=str(event.get("stopType", "eos")), truncated=bool(event.get("truncated", False)),
            tokens_predicted=_int(event.get("tokensPredicted")), tokens_evaluated=_int(event.get("tokensEvaluated")),
            cache_n=_int(event.get("cacheN")), prompt_n=_int(event.get("promptN")), slot_id=request.slot_id,
            reasoning_content=str(event.get("reasoningContent") or ""),
            tool_calls=None if calls is None else tuple((str(n), dict(a)) for n, a in calls))
        if request.stream and on_delta is not None and completion.content:
            on_delta(completion.content)  # the stream parser splits reasoning from the answer as it did live
        return completion

    async def context_window(self) -> int | None:
        return None

    async def describe(self) -> dict[str, object]:
        return {"model_alias": "replay", "modalities": {}}

    def unavailable_hint(self) -> str:
        return "the replay provider answers from the recorded trace"

    async def close(self) -> None:
        return None


class RecordedResults:
    """The recorded result of each call, handed out by tool and args in recording order."""

    def __init__(self, recorded: RecordedSession) -> None:
        self._pending = [i for step in recorded.steps for i in step.invocations]

    def take(self, tool: str, args: Mapping[str, Any]) -> ToolResult:
        for index, event in enumerate(self._pending):
            if event.get("tool") == tool and event.get("args") == dict(args):
                del self._pending[index]
                details = event.get("details")
                return ToolResult(str(event.get("status", "error")), str(event.get("summary", "")),
                                  dict(details) if isinstance(details, dict) else {})
        return ToolResult.error(f"replay: the recording has no result for {tool} with these args (the rerun made "
                                "a call the recorded session did not)")

    def runner(self, tool: str) -> Callable[[Mapping[str, Any], ToolContext], Any]:
        async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
            return self.take(tool, args)

        return run


def rerun_trace(state_dir: Path, session_id: str) -> RerunReport:
    """Re-run the recorded session `session_id` of `state_dir` and compare (see the module doc)."""
    return asyncio.run(rerun_trace_async(Path(state_dir), session_id))


async def rerun_trace_async(state_dir: Path, session_id: str) -> RerunReport:
    recorded = read_recorded_session(trace_path(state_dir, session_id))
    salt = read_salt(state_dir)
    if salt is None:
        raise UnreplayableTraceError(f"there is no salt at {salt_path(state_dir)}, so the recorded prompt hashes "
                                     "cannot be compared; re-run a trace under the state dir that recorded it")
    with tempfile.TemporaryDirectory(prefix="atomic-agent-rerun-") as scratch:
        scratch_state = Path(scratch) / "state"
        _seed_scratch(state_dir, scratch_state, salt)
        replayed_path = await _run_recorded(recorded, scratch_state)
        replayed = read_recorded_session(replayed_path)
    drifts = compare_sessions(recorded, replayed)
    return RerunReport(recorded.session_id, len(recorded.turns), len(recorded.steps), tuple(drifts))


def _seed_scratch(source: Path, scratch: Path, salt: str) -> None:
    scratch.mkdir(mode=0o700, parents=True)
    for name in COPIED_FILES:
        if (source / name).is_file():
            shutil.copyfile(source / name, scratch / name)
    for name in COPIED_DIRS:
        if (source / name).is_dir():
            shutil.copytree(source / name, scratch / name, symlinks=True)
    target = salt_path(scratch)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    target.write_text(salt, encoding="ascii")


def _environ() -> dict[str, str]:
    # the developer's ATOMIC_AGENT_* settings (state dir, profile override, tracing switch) must not
    # steer the rerun; the rest (HOME, the cache dir) is what finding prompt assets needs
    return {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}


async def _run_recorded(recorded: RecordedSession, scratch_state: Path) -> Path:
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    environ = _environ()
    first = recorded.first_prompt()
    if first is None:
        raise UnreplayableTraceError(f"session {recorded.session_id} never built a prompt, so there is nothing to "
                                     "compare")
    transport = "grammar" if first.get("grammarHash") is not None else "native_tools"
    provider = ReplayProvider(recorded, transport)
    runtime = Runtime(boot(scratch_state, environ=environ), provider=provider, environ=environ)
    try:
        runtime._started = True  # no runtime_started: a rerun starts no MCP server, channel or tick
        missing = sorted(recorded.invoked_tools() - set(runtime.registry.names()))
        if missing:
            raise UnreplayableTraceError(
                f"session {recorded.session_id} called tool(s) {', '.join(missing)} that are not registered now "
                "(their plugin is disabled or gone, or they are live MCP tools, which a rerun does not connect); "
                "enable the plugin that provides them, or record the session again")
        results = RecordedResults(recorded)
        registry = ToolRegistry([attrs.evolve(s, run=results.runner(s.name)) for s in runtime.registry.specs()])
        runtime.registry = registry
        runtime._services["tool_registry"] = registry
        runtime._plan = _recorded_plan(runtime, registry, first)
        session = runtime.open_session(None, Path(recorded.working_dir))
        for turn in recorded.turns:
            runtime.prompt_date = _turn_date(turn.steps)
            await runtime.run_turn(turn.user_text, session_id=session.id)
        return trace_path(scratch_state, session.id)
    finally:
        runtime._started = False  # nor runtime_stopping: nothing was started
        await runtime.close()


def _recorded_plan(runtime: Any, registry: ToolRegistry, prompt: Mapping[str, Any]) -> PromptPlan:
    """The prompt plan the recording ran with: its profile, style, budgets and transport; today's tools."""
    try:
        profile = profile_named(str(prompt.get("profile", "plain")), chatml=prompt.get("framing") == "chatml")
        style = resolve_prompt_style(str(prompt.get("promptStyle") or "coached"))
    except ValueError as exc:
        raise UnreplayableTraceError(f"the recording's prompt settings are unknown here ({exc}); re-run it with the "
                                     "atomic-agent version that recorded it, or record it again") from exc
    max_calls = runtime.config.agent.max_parallel_tool_calls
    grammar = grammar_for(registry, profile, max_calls) if prompt.get("grammarHash") is not None else None
    n_ctx = prompt.get("nCtx")
    return PromptPlan(profile=profile, grammar=grammar, n_ctx=n_ctx if isinstance(n_ctx, int) else None,
                      n_predict=_int(prompt.get("nPredict")) or 512, env=runtime.prompt_assets.env(),
                      registry=registry, max_calls=max_calls, tools_generation=registry.generation, style=style)


def _turn_date(steps: Any) -> date | None:
    for step in steps:
        raw = step.prompt.get("promptDate") if step.prompt is not None else None
        if isinstance(raw, str):
            try:
                return date.fromisoformat(raw)
            except ValueError:
                break
    return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


__all__ = ["Drift", "RerunReport", "UnreplayableTraceError", "rebuild_stable_prefix", "rerun_trace",
           "rerun_trace_async"]
