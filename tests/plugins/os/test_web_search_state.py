"""The persisted search cache and provider cooldown: round trip, expiry, FIFO, corruption."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.os.web.json_state_file import save_state
from atomic_agent.plugins.os.web.provider_cooldown import CEILING_S, ProviderCooldown
from atomic_agent.plugins.os.web.search_cache import SearchCache, cache_key
from atomic_agent.plugins.os.web.search_result import SearchResult


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


HIT = [SearchResult("t", "https://x.example", "s")]


def test_cache_round_trips_through_the_state_file(tmp_path: Path) -> None:
    path = tmp_path / "web-search-cache.json"
    SearchCache(3600, path).put(cache_key("q", 5), HIT, "exa")
    assert SearchCache(3600, path).get(cache_key("q", 5)) == (HIT, "exa")


def test_expired_rows_are_dropped_on_load(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    clock = Clock()
    SearchCache(60, path, clock).put("k", HIT, "exa")
    clock.now += 61
    assert SearchCache(60, path, clock).get("k") is None


def test_the_cache_keeps_at_most_256_entries_first_in_first_out(tmp_path: Path) -> None:
    cache = SearchCache(3600, tmp_path / "c.json")
    for i in range(300):
        cache.put(f"q{i}", HIT, "exa")
    assert len(cache) == 256 and cache.get("q0") is None and cache.get("q299") is not None
    assert len(SearchCache(3600, tmp_path / "c.json")) == 256


def test_a_corrupt_cache_file_starts_cold(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text("{not json")
    cache = SearchCache(3600, path)
    assert len(cache) == 0
    cache.put("k", HIT, "exa")
    assert json.loads(path.read_text())["entries"][0]["key"] == "k"


def test_malformed_rows_are_skipped_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"entries": [{"key": "bad"}, {"key": "ok", "at": 1e12, "results": [
        {"title": "t", "url": "https://u"}]}, 7]}))
    cache = SearchCache(1e13, path)
    assert cache.get("ok") is not None and cache.get("bad") is None


def test_a_failed_write_is_swallowed(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = SearchCache(3600, blocker / "c.json")  # parent is a file: every write fails
    cache.put("k", HIT, "exa")
    assert cache.get("k") == (HIT, "exa")
    assert not save_state(blocker / "c.json", {})


def test_writes_leave_no_temp_files(tmp_path: Path) -> None:
    cache = SearchCache(3600, tmp_path / "c.json")
    for i in range(5):
        cache.put(f"k{i}", HIT, "exa")
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]


def test_cooldown_ladder_doubles_up_to_the_ceiling(tmp_path: Path) -> None:
    clock = Clock()
    cooldown = ProviderCooldown(tmp_path / "cd.json", clock, base_s=60, ceiling_s=300)
    assert [cooldown.strike("exa") for _ in range(5)] == [60, 120, 240, 300, 300]


def test_cooldown_ladder_survives_a_restart(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "cd.json"
    ProviderCooldown(path, clock).strike("exa")
    again = ProviderCooldown(path, clock)
    assert again.parked_for("exa") == 60 and again.strike("exa") == 120


def test_a_park_that_lapsed_while_nothing_ran_reads_as_expired(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "cd.json"
    ProviderCooldown(path, clock).strike("exa")
    clock.now += 61
    assert ProviderCooldown(path, clock).parked_for("exa") == 0


def test_records_older_than_two_ceilings_are_dropped_on_load(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "cd.json"
    ProviderCooldown(path, clock).strike("exa")
    clock.now += 2 * CEILING_S + 1
    assert ProviderCooldown(path, clock).strikes("exa") == 0


def test_success_clears_the_park(tmp_path: Path) -> None:
    cooldown = ProviderCooldown(tmp_path / "cd.json")
    cooldown.strike("exa")
    cooldown.clear("exa")
    assert ProviderCooldown(tmp_path / "cd.json").strikes("exa") == 0


def test_a_corrupt_cooldown_file_starts_cold(tmp_path: Path) -> None:
    path = tmp_path / "cd.json"
    path.write_text('{"providers": {"exa": {"strikes": "many"}}}')
    assert ProviderCooldown(path).strikes("exa") == 0
    path.write_text("[]")
    assert ProviderCooldown(path).strikes("exa") == 0
