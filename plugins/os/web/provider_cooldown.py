"""Park a search provider that keeps failing, longer each time (a doubling ladder).

A strike parks the provider for BASE_S, doubling per consecutive strike up to CEILING_S;
a success clears it. Mirrored to `<state>/web-search-cooldown.json` so the ladder
survives a restart: a park that lapsed while nothing ran reads as expired, and records
older than two ceilings are dropped on load.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import attrs

from .json_state_file import load_state, save_state

COOLDOWN_FILE = "web-search-cooldown.json"
BASE_S = 60.0
CEILING_S = 30 * 60.0


@attrs.define
class Park:
    strikes: int
    until: float
    last: float


class ProviderCooldown:
    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time,
                 base_s: float = BASE_S, ceiling_s: float = CEILING_S) -> None:
        self.path = path
        self.clock = clock
        self.base_s = base_s
        self.ceiling_s = ceiling_s
        self._parks: dict[str, Park] = {}
        self._load()

    def _load(self) -> None:
        raw = load_state(self.path)
        rows = raw.get("providers") if raw else None
        if not isinstance(rows, dict):
            return
        now = self.clock()
        for name, row in rows.items():
            try:
                park = Park(int(row["strikes"]), float(row["until"]), float(row["last"]))
            except (KeyError, TypeError, ValueError):
                continue
            if park.strikes > 0 and now - park.last <= 2 * self.ceiling_s:
                self._parks[str(name)] = park

    def _save(self) -> None:
        save_state(self.path, {"version": 1, "providers": {n: attrs.asdict(p) for n, p in self._parks.items()}})

    def parked_for(self, name: str) -> float:
        """Seconds the provider stays parked (0 when it may be tried)."""
        park = self._parks.get(name)
        return max(0.0, park.until - self.clock()) if park else 0.0

    def strikes(self, name: str) -> int:
        park = self._parks.get(name)
        return park.strikes if park else 0

    def strike(self, name: str) -> float:
        now = self.clock()
        strikes = self.strikes(name) + 1
        duration = min(self.base_s * 2 ** (strikes - 1), self.ceiling_s)
        self._parks[name] = Park(strikes, now + duration, now)
        self._save()
        return duration

    def clear(self, name: str) -> None:
        if self._parks.pop(name, None) is not None:
            self._save()
