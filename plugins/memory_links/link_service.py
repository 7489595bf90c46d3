"""The `memory_links` service: what the notes phase folds into `### recalled` (bounded BFS
over the link graph, after the base hits) and which note ids each session's turn surfaced
(the link generator's and the neighbour evolver's allowlist).

Switched off (`memoryLinks.enabled = false`) `expand` returns nothing and touches no
table, so recall is byte-identical to a runtime without the plugin.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE, Memory

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

MAX_SESSIONS = 256
EXPANSION_METRIC = "agent.memory.link_expansion.hits"


@attrs.frozen
class Surfaced:
    user_text: str
    ids: tuple[int, ...]


class LinkService:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self._surfaced: OrderedDict[str, Surfaced] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return bool(self.cfg.enabled)

    def _memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    def expand(self, session_id: str, user_text: str, base_ids: Sequence[int]) -> list[int]:
        """Ids linked to `base_ids` (BFS, both directions, bounded), not including them; the
        union is remembered as this turn's surfaced set."""
        if not self.enabled:
            return []
        expanded: list[int] = []
        if base_ids and self.cfg.max_expanded > 0:
            memory = self._memory()
            expanded = memory.link_store().expand(list(base_ids), depth=self.cfg.expansion_depth,
                                                  max_expanded=self.cfg.max_expanded)
            if expanded:
                memory.metrics.inc(EXPANSION_METRIC, len(expanded), depth=self.cfg.expansion_depth)
        self.remember(session_id, user_text, [*base_ids, *expanded])
        return expanded

    def remember(self, session_id: str, user_text: str, ids: Sequence[int]) -> None:
        self._surfaced[session_id] = Surfaced(user_text, tuple(dict.fromkeys(int(i) for i in ids)))
        self._surfaced.move_to_end(session_id)
        while len(self._surfaced) > MAX_SESSIONS:
            self._surfaced.popitem(last=False)

    def surfaced(self, session_id: str, user_text: str) -> tuple[int, ...]:
        """The ids `### recalled` showed for this session's message (empty for another message)."""
        found = self._surfaced.get(session_id)
        return found.ids if found is not None and found.user_text == user_text else ()
