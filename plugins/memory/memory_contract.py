"""The `memory` service (memory.sqlite: notes, profile, links) and `memory_views` as other
plugins see them: their names and what they offer (see plugins/metrics/metrics_contract.py
for what a contract module may hold).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from atomic_agent.plugins.metrics.metrics_contract import Metrics

MEMORY_SERVICE = "memory"
MEMORY_VIEWS_SERVICE = "memory_views"


class Memory(Protocol):
    """memory.sqlite's stores (opened on first use) and what the memory_* plugins share
    around them. The stores' own types stay the memory plugin's: they are `Any` here."""

    @property
    def StoreError(self) -> type[Exception]:
        """What a store raises for a lock, a refusal or damage."""
        ...

    @property
    def ValidationError(self) -> type[Exception]:
        """What a store raises for a value it will not keep."""
        ...

    @property
    def FusionWeights(self) -> type[Any]:
        """The blend hybrid recall passes to a note store's `recall`."""
        ...

    @property
    def QueryFeedback(self) -> type[Any]:
        """Pseudo-relevance feedback a note store's `recall` can fold in."""
        ...

    @property
    def metrics(self) -> Metrics: ...

    @property
    def path(self) -> Path:
        """memory.sqlite."""
        ...

    @property
    def vector_recall(self) -> Any:
        """What `attach_vector_recall` attached (hybrid recall), or None."""
        ...

    @property
    def database(self) -> Any: ...

    @staticmethod
    def is_valid_profile_key(key: str) -> bool: ...

    def profile_store(self) -> Any: ...

    def note_store(self, max_entries: int = ..., max_content_chars: int = ...) -> Any: ...

    def link_store(self) -> Any: ...

    def lesson_store(self, max_entries: int = ...) -> Any: ...

    def procedure_store(self, min_runs: int = ...) -> Any: ...

    def recall_vote_store(self, max_vote: float = ...) -> Any:
        """Votes on recalled notes and shown profile facts (see plugins/memory/recall_votes.py)."""
        ...

    def outcome_voter(self, kind: str) -> Any:
        """One phase's turn-outcome votes on what it shows (see plugins/memory/outcome_votes.py)."""
        ...

    def background_slot(self, provider: Any, session_id: str, caller: str) -> int:
        """The provider slot a memory sub-call rides (see plugins/memory/background_slot.py)."""
        ...

    def attach_vector_recall(self, vector_recall: Any) -> None: ...

    def on_notes_stored(self, listener: Callable[[Sequence[int]], None]) -> None: ...

    def evolve_tags(self, note_id: int, add_tags: list[str], lease_ms: int = ...) -> str: ...

    def acquire_lease(self, note_id: int, lease_ms: int = ...) -> bool: ...

    def release_lease(self, note_id: int) -> None: ...

    def show_lessons(self, session_id: str, turn_index: int, ids: Iterable[int]) -> None:
        """Record that a turn's prompt showed these lessons (the model's vote allowlist)."""
        ...

    def lessons_shown(self, session_id: str, turn_index: int) -> tuple[int, ...]: ...

    def assess_turn(self, entries: Any, session_id: str, turn_index: int, *, correction: str = "",
                    detour_calls: int = ...) -> Any:
        """A turn's trouble (failed, corrected, detour) from its transcript rows, or None
        (see plugins/memory/turn_trouble.py)."""
        ...

    @staticmethod
    def corrects(text: str) -> bool:
        """Does this user message correct the reply before it?"""
        ...
