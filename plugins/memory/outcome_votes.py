"""The turn-outcome votes of one memory phase (notes or profile): which rows each running
turn was shown (the union over its steps), voted on once when the turn ends, by the
curation rules of recall_votes. One failing vote never stops the others, and a database that
cannot be written never fails the turn (the outcome is kept as `failed: ...`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .recall_votes import RecallVoteStore
from .turn_trouble import corrects, turn_verdict

RECENT = 64
APPLIED_METRIC = "agent.memory.voting.applied"


class OutcomeVoter:
    def __init__(self, service: Any, kind: str) -> None:
        self.service = service
        self.kind = kind
        self.surfaced: dict[str, set[int]] = {}
        self.turns: dict[str, int] = {}  # the running turn of each session
        self.votes: list[tuple[int, str]] = []  # (row id, outcome) of recent votes, for tests and `status`
        self.overturned: list[tuple[int, int]] = []  # (row id, corrected turn)

    def before_turn(self, session_id: str, turn_index: int) -> None:
        self.surfaced[session_id] = set()
        self.turns[session_id] = int(turn_index)

    def shown(self, session_id: str, ids: Iterable[int]) -> None:
        """This session's running turn showed these rows (a step may show more)."""
        self.surfaced.setdefault(session_id, set()).update(int(i) for i in ids)

    def after_turn(self, digest: Any, max_vote: float) -> None:
        shown = self.surfaced.pop(digest.session_id, set())
        if self.turns.get(digest.session_id) == digest.turn_index:
            del self.turns[digest.session_id]
        try:
            store = RecallVoteStore(self.service.database, max_vote=max_vote)
        except Exception as exc:  # memory.sqlite unusable: nothing votes, the turn is long over
            self.votes = [*self.votes[-(RECENT - 1):], *((i, f"failed: {type(exc).__name__}") for i in sorted(shown))]
            return
        if digest.turn_index > 0 and corrects(digest.user_text):
            try:
                turned = store.overturn(digest.session_id, digest.turn_index - 1, self.kind)
            except Exception:  # a locked database: this turn's own votes still go ahead
                turned = ()
            self.overturned = [*self.overturned[-(RECENT - 1):],
                               *((i, digest.turn_index - 1) for _k, i in turned)]
        verdict = turn_verdict(digest.reason)
        if not shown or verdict is None:
            return
        for row_id in sorted(shown):
            try:
                outcome = store.vote(self.kind, row_id, digest.session_id, digest.turn_index, verdict)
            except Exception as exc:  # a locked database or a vanished row: the next one still votes
                outcome = f"failed: {type(exc).__name__}"
            self.service.metrics.inc(APPLIED_METRIC, kind=self.kind, direction="up" if verdict else "down",
                                     outcome=outcome.split(":", 1)[0])
            self.votes = [*self.votes[-(RECENT - 1):], (row_id, outcome)]
