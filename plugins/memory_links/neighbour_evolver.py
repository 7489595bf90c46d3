"""The neighbour evolver (memory v2 phase 3): apply the EVOLVE directives of the link
generator's completion to surfaced notes' tags, never their content.

Order per directive: allowlist (ids surfaced this turn) first, then the hard cap
`maxPerWrite`, then the store's own checks (lease, no-change, missing, invalid tags).
Every directive ends in one outcome, counted under `agent.memory.evolution.applied` or
`agent.memory.evolution.skipped{reason}`. Nothing here raises.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

APPLIED_METRIC = "agent.memory.evolution.applied"
SKIPPED_METRIC = "agent.memory.evolution.skipped"
PROMPT_TEMPLATE = "neighbour_evolver.j2"
GRAMMAR_FILE = "neighbour_evolver.gbnf"


class NeighbourEvolver:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg

    @property
    def enabled(self) -> bool:
        return bool(self.cfg.enabled)

    def prompt_rules(self) -> str:
        env = self.runtime.service("prompt_assets").env()
        return env.get_template(PROMPT_TEMPLATE).render(max_per_write=self.cfg.max_per_write).rstrip("\n")

    def grammar_rules(self) -> str:
        return str(self.runtime.service("prompt_assets").grammar(GRAMMAR_FILE))

    def apply(self, session_id: str, directives: Sequence[Any], allowlist: Collection[int]) -> dict[str, int]:
        """Counts per outcome: applied | not_in_allowlist | cap_hit | lease_held | no_change |
        missing | invalid."""
        memory = self.runtime.service(MEMORY_SERVICE)
        counts: dict[str, int] = {}
        allowed = set(allowlist)
        tried = 0
        for directive in directives:
            if directive.target_id not in allowed:
                outcome = "not_in_allowlist"
            elif tried >= self.cfg.max_per_write:
                outcome = "cap_hit"
            else:
                tried += 1
                try:
                    outcome = memory.evolve_tags(directive.target_id, list(directive.add_tags),
                                                 lease_ms=self.cfg.lease_ms)
                except memory.ValidationError:
                    outcome = "invalid"
                except memory.StoreError:
                    outcome = "failed"
            counts[outcome] = counts.get(outcome, 0) + 1
            if outcome == "applied":
                memory.metrics.inc(APPLIED_METRIC, session_id=session_id)
            else:
                memory.metrics.inc(SKIPPED_METRIC, session_id=session_id, reason=outcome)
        return counts
