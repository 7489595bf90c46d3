"""The query rewriter (memory v2.5 phase A): before a turn's first step, a referential
message ("did they mention it?") is rewritten into a self-contained query by one small
completion on the background slot (never the session's main slot), and the notes phase
recalls with both queries merged.

The gate is pure (referential_gate); the call is bounded (n_predict, grammar, timeout);
every failure (timeout, provider error, malformed, empty or NONE answer) leaves the raw
message as the only query. No history (first turn of a session) is a hard skip. Counted
under `agent.memory.retrieve.rewriter{outcome}` with `.duration_ms`, the gate under
`.gate.fired` / `.gate.skipped{reason}`.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .referential_gate import is_referential

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

# The guide puts the rewrite on slot -1. Measured on the real server (tests/plugins/memory_fabric/
# test_v2_real_server.py), -1 lets llama-server pick the least recently used idle slot, which
# at a turn's start is the session's own main slot: its cached prefix was evicted. So the
# rewrite rides the background slot like the other memory sub-calls, and falls back to -1
# (counted) only where no slot is reserved.
SLOT_CALLER = "rewriter"
MAX_SESSIONS = 256
TURN_CHARS = 600
OUTCOME_METRIC = "agent.memory.retrieve.rewriter"
DURATION_METRIC = "agent.memory.retrieve.rewriter.duration_ms"
GATE_FIRED_METRIC = "agent.memory.retrieve.rewriter.gate.fired"
GATE_SKIPPED_METRIC = "agent.memory.retrieve.rewriter.gate.skipped"
NOTES_BLOCK = "memoryNotes"
PREFIX_TEMPLATE = "query_rewriter.j2"
TAIL_TEMPLATE = "query_rewriter_turns.j2"
GRAMMAR_FILE = "query_rewriter.gbnf"


@attrs.frozen
class RewriteOutcome:
    outcome: str  # ok | none | skipped_not_referential | skipped_no_history | timeout | failed | aborted
    query: str | None = None
    detail: str = ""


def _clip(text: str, limit: int = TURN_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class QueryRewriter:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self._rewrites: OrderedDict[str, tuple[str, str]] = OrderedDict()  # session -> (message, query)
        self.outcomes: list[RewriteOutcome] = []
        self._prefix: str | None = None
        self._grammar: str | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.cfg.enabled)

    def rewrite_for(self, session_id: str, user_text: str) -> str | None:
        """The rewrite made for this session's `user_text`, if any (None for any other text)."""
        found = self._rewrites.get(session_id)
        return found[1] if found is not None and found[0] == user_text else None

    def _metrics(self) -> Any:
        return self.runtime.service(MEMORY_SERVICE).metrics

    def gate(self, message: str, history_len: int) -> str | None:
        """None when the rewriter should fire, else the skip reason."""
        if not message.strip():
            return "empty_message"
        if self.cfg.gate_mode != "always" and not is_referential(message):
            return "not_referential"
        if history_len == 0:
            return "no_history"
        return None

    def _recall_on(self) -> bool:
        """The rewrite only feeds `### recalled`: with the notes phase or its recall off it is not made."""
        notes = self.runtime.config.blocks.get(NOTES_BLOCK)
        return bool(notes is not None and getattr(notes, "enabled", False) and notes.recall_injection.enabled)

    async def prepare_turn(self, start: Any) -> None:
        self._rewrites.pop(start.session_id, None)
        if not self._recall_on():
            return
        result = await self.rewrite(start.session_id, start.user_text, start.history)
        if result.query is not None:
            self._rewrites[start.session_id] = (start.user_text, result.query)
            self._rewrites.move_to_end(start.session_id)
            while len(self._rewrites) > MAX_SESSIONS:
                self._rewrites.popitem(last=False)

    async def rewrite(self, session_id: str, message: str, history: Any) -> RewriteOutcome:
        from .rewrite_parser import parse_rewrite

        metrics = self._metrics()
        skip = self.gate(message, len(history))
        if skip is not None:
            metrics.inc(GATE_SKIPPED_METRIC, gate_mode=self.cfg.gate_mode, reason=skip)
            outcome = RewriteOutcome("skipped_no_history" if skip == "no_history" else "skipped_not_referential")
            return self._finish(outcome, None)
        metrics.inc(GATE_FIRED_METRIC, gate_mode=self.cfg.gate_mode)
        started = time.perf_counter()
        try:
            text = await asyncio.wait_for(self._complete(session_id, message, history), self.cfg.timeout_ms / 1000)
        except asyncio.CancelledError:
            self._finish(RewriteOutcome("aborted"), started)
            raise
        except TimeoutError:
            return self._finish(RewriteOutcome("timeout", detail=f"no answer within {self.cfg.timeout_ms} ms"),
                                started)
        except Exception as exc:  # fire-safe: the raw message stays the query
            return self._finish(RewriteOutcome("failed", detail=f"{type(exc).__name__}: {exc}"), started)
        parsed = parse_rewrite(text, self.cfg.max_query_chars)
        if parsed.query is None:
            return self._finish(RewriteOutcome("none" if parsed.reason == "none" else "failed", detail=parsed.reason),
                                started)
        if parsed.query.strip().lower() == message.strip().lower():
            return self._finish(RewriteOutcome("none", detail="unchanged"), started)
        return self._finish(RewriteOutcome("ok", parsed.query, parsed.reason), started)

    async def _complete(self, session_id: str, message: str, history: Any) -> str:
        from atomic_agent.api import CompletionRequest

        assets = self.runtime.service("prompt_assets")
        env = assets.env()
        if self._prefix is None:
            self._prefix = env.get_template(PREFIX_TEMPLATE).render()
        pairs = [{"user": _clip(p.user_text), "reply": _clip(p.reply_text)}
                 for p in list(history)[-self.cfg.history_turns:]]
        tail = env.get_template(TAIL_TEMPLATE).render(pairs=pairs, message=_clip(message))
        provider = self.runtime.provider
        slot = self.runtime.service(MEMORY_SERVICE).background_slot(provider, session_id, SLOT_CALLER)
        grammar = None
        if provider.capabilities.transport == "grammar":
            if self._grammar is None:
                text = assets.grammar(GRAMMAR_FILE)
                self._grammar = "\n".join(ln for ln in text.splitlines()
                                          if ln.strip() and not ln.lstrip().startswith("#")) + "\n"
            grammar = self._grammar
        request = CompletionRequest(prompt=self._prefix + tail, grammar=grammar, n_predict=self.cfg.n_predict,
                                    slot_id=slot, cache_prompt=True, temperature=0.0, stream=False,
                                    prefix_length=len(self._prefix))
        return str((await provider.complete(request)).content)

    def _finish(self, result: RewriteOutcome, started: float | None) -> RewriteOutcome:
        metrics = self._metrics()
        metrics.inc(OUTCOME_METRIC, outcome=result.outcome)
        if started is not None:
            metrics.observe(DURATION_METRIC, (time.perf_counter() - started) * 1000, outcome=result.outcome)
        self.outcomes = [*self.outcomes[-31:], result]
        return result
