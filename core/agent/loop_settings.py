"""The loop detector's thresholds, read from `ATOMIC_AGENT_LOOP_*` environment variables.

These knobs are env-only on purpose: they tune a safety net, not user-facing behaviour,
so they never appear in config.json.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

import attrs

_log = logging.getLogger(__name__)


def _positive(_inst: object, attribute: attrs.Attribute, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"LoopSettings.{attribute.name} must be a whole number >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class LoopSettings:
    """Per-turn loop detection thresholds (see `ToolLoopTracker`).

    - `warning_threshold`: prior identical-args calls at which `check` warns.
    - `critical_threshold`: prior identical args+result outcomes at which `check` vetoes.
    - `breaker_veto_streak`: consecutive vetoes after which the turn ends gracefully.
    - `history_size`: ring-buffer length of the per-turn call history.
    - `wandering_threshold`: distinct-args spread on a wandering-prone tool that warns.
    - `wandering_escalation`: distinct-args spread that trips the breaker.
    """

    warning_threshold: int = attrs.field(default=3, validator=_positive)
    critical_threshold: int = attrs.field(default=5, validator=_positive)
    breaker_veto_streak: int = attrs.field(default=3, validator=_positive)
    history_size: int = attrs.field(default=40, validator=_positive)
    wandering_threshold: int = attrs.field(default=6, validator=_positive)
    wandering_escalation: int = attrs.field(default=12, validator=_positive)

    def clamped(self) -> LoopSettings:
        """A copy with the ordering invariants enforced.

        critical >= warning (a veto never precedes its warning), escalation >= wandering
        threshold, and history >= escalation so the spread window is never trimmed
        before it can escalate.
        """
        critical = max(self.critical_threshold, self.warning_threshold)
        escalation = max(self.wandering_escalation, self.wandering_threshold)
        history = max(self.history_size, escalation)
        return attrs.evolve(self, critical_threshold=critical, wandering_escalation=escalation,
                            history_size=history)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LoopSettings:
        """Defaults overridden by any set `ATOMIC_AGENT_LOOP_*` variable, then clamped.

        A value that is not a whole number >= 1 is logged and ignored (the default
        stays): a typo in a tuning knob must never stop a turn from running.
        """
        env = os.environ if environ is None else environ
        defaults = cls()
        values: dict[str, int] = {}
        for name, env_name in LOOP_ENV_VARS.items():
            raw = env.get(env_name, "").strip()
            if not raw:
                continue
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value < 1:
                _log.warning("%s=%r is not a whole number >= 1; using the default %d. Unset it or "
                             "give a positive integer.", env_name, raw, getattr(defaults, name))
                continue
            values[name] = value
        return cls(**values).clamped()


LOOP_ENV_VARS: Mapping[str, str] = {
    "warning_threshold": "ATOMIC_AGENT_LOOP_WARNING_THRESHOLD",
    "critical_threshold": "ATOMIC_AGENT_LOOP_CRITICAL_THRESHOLD",
    "breaker_veto_streak": "ATOMIC_AGENT_LOOP_BREAKER_VETO_STREAK",
    "history_size": "ATOMIC_AGENT_LOOP_HISTORY_SIZE",
    "wandering_threshold": "ATOMIC_AGENT_LOOP_WANDERING_THRESHOLD",
    "wandering_escalation": "ATOMIC_AGENT_LOOP_WANDERING_ESCALATION",
}
