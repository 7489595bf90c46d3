"""The link-generator sub-call: after a turn, one small completion on the background
(reflection) slot proposes typed edges between the notes that turn surfaced; the neighbour
evolver's EVOLVE directives ride the same completion when `memoryEvolution.enabled` is on.

Fire-and-forget like reflection: scheduled after the reply, never awaited by the turn,
aborted by the session's next turn. Outcomes: ok | none | skipped | aborted | timeout |
failed (`agent.memory.link_generator`), with `.duration_ms`.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .neighbour_evolver import NeighbourEvolver

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

    from .link_parser import ParsedLinks

OUTCOME_METRIC = "agent.memory.link_generator"
DURATION_METRIC = "agent.memory.link_generator.duration_ms"
WRITTEN_METRIC = "agent.memory.links_written"
DROPPED_METRIC = "agent.memory.link_generator.dropped"
PREFIX_TEMPLATE = "link_generator.j2"
TAIL_TEMPLATE = "link_candidates.j2"
GRAMMAR_FILE = "link_generator.gbnf"
EVOLUTION_BLOCK = "memoryEvolution"  # the neighbour evolver's switch (this plugin's block)
NOTE_CHARS = 240
TEXT_CHARS = 1000


@attrs.frozen
class LinkOutcome:
    outcome: str
    written: tuple[tuple[int, str, int], ...] = ()
    dropped: tuple[tuple[str, str], ...] = ()
    evolve: dict[str, int] = attrs.field(factory=dict)
    slot_id: int = -1
    error: str | None = None


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def strip_comments(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")) + "\n"


class LinkGenerator:
    def __init__(self, runtime: RuntimeView, cfg: Any, service: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.service = service
        self.assets = runtime.service("prompt_assets")
        self._pending: dict[str, asyncio.Task[Any]] = {}
        self._aborted: set[asyncio.Task[Any]] = set()
        self.outcomes: list[LinkOutcome] = []
        evolution = runtime.config.block(EVOLUTION_BLOCK)
        self._evolver = NeighbourEvolver(runtime, evolution) if evolution.enabled else None

    def evolver(self) -> NeighbourEvolver | None:
        """The neighbour evolver when its switch is on: its rules ride this call."""
        return self._evolver

    def before_turn(self, start: Any) -> None:
        task = self._pending.get(start.session_id)
        if task is not None and not task.done():
            self._aborted.add(task)
            task.cancel()

    def prefix(self, evolver: Any | None) -> str:
        rules = evolver.prompt_rules() if evolver is not None else ""
        return self.assets.env().get_template(PREFIX_TEMPLATE).render(
            links=self.cfg.auto_generate, max_links=self.cfg.max_links_per_call, evolve_rules=rules)

    def grammar(self, evolver: Any | None) -> str:
        base = strip_comments(self.assets.grammar(GRAMMAR_FILE))
        alternatives = ["link-line"] if self.cfg.auto_generate else []
        if evolver is None:
            return base
        alternatives.append("evolve-line")
        lines = [f"entry ::= {' | '.join(alternatives)}" if ln.startswith("entry ::=") else ln
                 for ln in base.splitlines()]
        return "\n".join(lines) + "\n" + strip_comments(evolver.grammar_rules())

    async def after_turn(self, digest: Any) -> LinkOutcome:
        started = time.perf_counter()
        task = asyncio.current_task()
        if task is not None:
            self._pending[digest.session_id] = task
        try:
            result = await self._run(digest)
        except asyncio.CancelledError:
            result = LinkOutcome("aborted", error="the next turn of this session started")
            if task not in self._aborted:  # cancelled from outside (shutdown): count it, then let it end
                self._finish(result, started)
                raise
        except TimeoutError:
            result = LinkOutcome("timeout", error=f"no answer within {self.cfg.generator_timeout_ms} ms")
        except Exception as exc:  # never crash the loop: count and move on
            result = LinkOutcome("failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            if self._pending.get(digest.session_id) is task:
                del self._pending[digest.session_id]
            self._aborted.discard(task)  # type: ignore[arg-type]
        return self._finish(result, started)

    async def _run(self, digest: Any) -> LinkOutcome:
        from atomic_agent.api import CompletionRequest

        from .link_parser import parse_links

        evolver = self.evolver()
        if not self.cfg.auto_generate and evolver is None:
            return LinkOutcome("skipped", error="autoGenerate is off and no evolver rides the call")
        allow = self.service.surfaced(digest.session_id, digest.user_text)
        if len(allow) < self.cfg.min_candidates:
            return LinkOutcome("skipped", error=f"{len(allow)} surfaced notes (minCandidates {self.cfg.min_candidates})")
        memory = self.runtime.service(MEMORY_SERVICE)
        store = memory.note_store()
        notes = [n for n in (store.get(i) for i in allow) if n is not None]
        if len(notes) < self.cfg.min_candidates:
            return LinkOutcome("skipped", error="surfaced notes were deleted")
        provider = self.runtime.provider
        slot = memory.background_slot(provider, digest.session_id, "link_generator")
        prefix = self.prefix(evolver)
        tail = self.assets.env().get_template(TAIL_TEMPLATE).render(
            notes=[{"id": n.id, "text": _clip(n.content, NOTE_CHARS)} for n in notes],
            user_text=_clip(digest.user_text, TEXT_CHARS), reply_text=_clip(digest.reply_text, TEXT_CHARS))
        grammar = self.grammar(evolver) if provider.capabilities.transport == "grammar" else None
        request = CompletionRequest(prompt=prefix + tail, grammar=grammar, n_predict=self.cfg.n_predict,
                                    slot_id=slot, cache_prompt=True, temperature=0.1, stream=False,
                                    prefix_length=len(prefix))
        completion = await asyncio.wait_for(provider.complete(request), self.cfg.generator_timeout_ms / 1000)
        parsed = parse_links(completion.content, {n.id for n in notes}, evolve=evolver is not None)
        return self._apply(parsed, memory, evolver, digest, slot)

    def _apply(self, parsed: ParsedLinks, memory: Any, evolver: Any | None, digest: Any, slot: int) -> LinkOutcome:
        dropped = [(d.line[:120], d.reason) for d in parsed.dropped]
        written: list[tuple[int, str, int]] = []
        if self.cfg.auto_generate:
            links = memory.link_store()
            for i, link in enumerate(parsed.links):
                if i >= self.cfg.max_links_per_call:
                    dropped.append((f"LINK #{link.from_id} {link.kind} #{link.to_id}", "cap_hit"))
                elif links.add(link.from_id, link.to_id, link.kind, source="link_generator"):
                    written.append((link.from_id, link.kind, link.to_id))
        else:
            dropped += [(f"LINK #{k.from_id} {k.kind} #{k.to_id}", "auto_generate_off") for k in parsed.links]
        allow = set(self.service.surfaced(digest.session_id, digest.user_text))
        evolve = evolver.apply(digest.session_id, parsed.evolves, allow) if evolver is not None else {}
        metrics = memory.metrics
        if written:
            metrics.inc(WRITTEN_METRIC, len(written), source="link_generator")
        for _line, reason in dropped:
            metrics.inc(DROPPED_METRIC, reason=reason)
        applied = written or evolve.get("applied", 0)
        return LinkOutcome("ok" if applied else "none", tuple(written), tuple(dropped), evolve, slot)

    def _finish(self, result: LinkOutcome, started: float) -> LinkOutcome:
        try:
            metrics = self.runtime.service(MEMORY_SERVICE).metrics
            metrics.inc(OUTCOME_METRIC, outcome=result.outcome)
            metrics.observe(DURATION_METRIC, (time.perf_counter() - started) * 1000, outcome=result.outcome)
        except Exception:
            pass  # memory.sqlite unusable: the outcome is still kept below
        self.outcomes = [*self.outcomes[-31:], result]
        return result
