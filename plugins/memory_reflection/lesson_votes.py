"""The reflection model's votes on the lessons a turn was shown (memory v2 phase 7a).

One grammar-constrained call on the reflection slot per turn that was shown lessons: the
exchange and the shown lessons (quoted as data) in, `UPVOTE lesson:<id>` / `DOWNVOTE
lesson:<id>` lines (or NONE) out. Only ids the turn was shown count (the allowlist), one
vote per lesson, at most eight; each accepted vote moves the lesson's score by one within
±maxVote (`memoryLessons`), once per (lesson, session, turn) however often the session is
replayed. Retirement by a negative score happens on the cold path, never here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE, Memory

from .reflection_call import ReflectionCall

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

PREFIX_TEMPLATE = "lesson_votes.j2"
TURN_TEMPLATE = "lesson_votes_turn.j2"
GRAMMAR_FILE = "lesson_votes.gbnf"
LESSONS_BLOCK = "memoryLessons"
RUNNER_METRIC = "agent.memory.voting.runner"
APPLIED_METRIC = "agent.memory.voting.applied"
REJECTED_METRIC = "agent.memory.voting.rejected"
N_PREDICT = 96
TEXT_CHARS = 600


@attrs.frozen
class VoteOutcome:
    outcome: str  # ok | none | failed | timeout
    applied: tuple[tuple[int, str, str], ...] = ()  # (lesson id, up | down, store outcome)
    rejected: tuple[tuple[str, str], ...] = ()  # (line, reason)
    error: str | None = None


def _clip(text: str, limit: int = TEXT_CHARS) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class LessonVoter:
    def __init__(self, runtime: RuntimeView, cfg: Any, assets: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.call = ReflectionCall(runtime, assets, prefix_template=PREFIX_TEMPLATE, turn_template=TURN_TEMPLATE,
                                   grammar_file=GRAMMAR_FILE, n_predict=N_PREDICT, purpose="lesson_votes")
        self.outcomes: list[VoteOutcome] = []

    @property
    def memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    def lessons_cfg(self) -> Any | None:
        block = self.runtime.config.blocks.get(LESSONS_BLOCK)
        return block if block is not None and block.enabled and block.model_votes else None

    def allowlist(self, digest: Any) -> tuple[int, ...]:
        """The lessons this turn's prompts showed (empty when model votes are off)."""
        if self.lessons_cfg() is None:
            return ()
        return self.memory.lessons_shown(digest.session_id, digest.turn_index)

    def prompt(self, user_text: str, reply_text: str, lessons: list[Any]) -> str:
        return self.call.prompt(
            user_text=_clip(user_text), reply_text=_clip(reply_text),
            lessons=[{"id": x.id, "trigger": _clip(x.trigger, 200), "advice": _clip(x.advice, 300)} for x in lessons])

    async def vote(self, digest: Any, allow: tuple[int, ...]) -> VoteOutcome:
        """One call, its votes applied; never raises except when cancelled."""
        try:
            result = await self._vote(digest, allow)
        except TimeoutError:
            result = VoteOutcome("timeout", error=f"no answer within {self.cfg.timeout_ms} ms")
        except Exception as exc:  # a locked database or a provider error: counted, nothing applied
            result = VoteOutcome("failed", error=f"{type(exc).__name__}: {exc}")
        metrics = self.memory.metrics
        metrics.inc(RUNNER_METRIC, outcome=result.outcome)
        for _id, direction, store_outcome in result.applied:
            metrics.inc(APPLIED_METRIC, direction=direction, outcome=store_outcome)
        for _line, reason in result.rejected:
            metrics.inc(REJECTED_METRIC, reason=reason)
        self.outcomes = [*self.outcomes[-31:], result]
        return result

    async def _vote(self, digest: Any, allow: tuple[int, ...]) -> VoteOutcome:
        from .lesson_vote_parser import parse_lesson_votes

        cfg = self.lessons_cfg()
        memory = self.memory
        store = memory.lesson_store(cfg.max_entries) if cfg is not None else memory.lesson_store()
        lessons = [x for x in (store.get(i) for i in allow) if x is not None and x.live]
        if not lessons:
            return VoteOutcome("none", error="no shown lesson is live any more")
        answer = await self.call.complete(memory, digest.session_id,
                                          self.prompt(digest.user_text, digest.reply_text, lessons),
                                          self.cfg.timeout_ms / 1000)
        parsed = parse_lesson_votes(answer, {x.id for x in lessons})
        max_vote = float(cfg.max_vote) if cfg is not None else 5.0
        applied = tuple((lesson_id, "up" if up else "down",
                         store.model_vote(lesson_id, digest.session_id, digest.turn_index, up, max_vote=max_vote))
                        for lesson_id, up in parsed.votes)
        outcome = "ok" if any(a[2] == "applied" for a in applied) else "none"
        return VoteOutcome(outcome, applied, parsed.rejected)
