"""The bi-temporal profile store's invariants 1-8, each pinned by name."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import attrs
import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.plugins.memory.profile_validation import is_valid_profile_key
from atomic_agent.plugins.memory_profile.profile_config import ProfileConfig
from atomic_agent.plugins.memory_reflection.reflection_parser import parse_reflection
from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry
from atomic_agent.testing.scripted_provider import calls
from atomic_agent.testing.tool_context_kit import make_tool_context
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, phase
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.unframed_prompt import unframed


@pytest.fixture
def profile(tmp_path: Path):
    db = MemoryDatabase.open(tmp_path / "memory.sqlite")
    yield ProfileStore(db, MetricsRegistry())
    db.close()


def test_profile_invariant_1_at_most_one_active_row_per_key(profile: ProfileStore) -> None:
    profile.set("language", "ru")
    profile.set("language", "en")
    conn = profile.database.conn
    assert conn.execute("SELECT count(*) FROM profile_facts WHERE key='language' AND superseded_by IS NULL"
                        ).fetchone()[0] == 1
    with pytest.raises(sqlite3.IntegrityError):  # the partial unique index itself refuses a second active row
        conn.execute("INSERT INTO profile_facts (key, value, valid_from, created_at, updated_at) "
                     "VALUES ('language', 'de', 1, 1, 1)")


def test_profile_invariant_2_every_set_preserves_history(profile: ProfileStore) -> None:
    ru = profile.set("language", "ru")
    en = profile.set("language", "en")
    chain = profile.history("language")
    assert [(f.value, f.active) for f in chain] == [("ru", False), ("en", True)]
    assert chain[0].superseded_by == en.id and en.supersedes == ru.id
    assert profile.metrics.counter_value("agent.memory.profile.superseded", key="language") == 1


def test_profile_invariant_2b_cross_key_supersession_flips_the_other_key(profile: ProfileStore) -> None:
    name = profile.set("name", "Alex")
    full = profile.set("full_name", "Alex Kim", supersedes_key="name")
    assert profile.get("name") is None and profile.get("full_name") == full
    assert profile.get_by_id(name.id).superseded_by == full.id  # type: ignore[union-attr]
    assert full.supersedes == name.id
    assert profile.metrics.counter_value("agent.memory.profile.superseded", key="name") == 1


def test_profile_invariant_3_remove_keeps_the_historical_chain(profile: ProfileStore) -> None:
    profile.set("city", "Porto")
    profile.set("city", "Lisbon")
    assert profile.remove("city") is True
    assert profile.get("city") is None
    assert [f.value for f in profile.history("city")] == ["Porto"]
    assert profile.remove("city") is False


def test_profile_invariant_4_legacy_rows_migrate_transparently(tmp_path: Path) -> None:
    path = tmp_path / "legacy.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE profile_facts (key TEXT PRIMARY KEY, value TEXT NOT NULL, pinned INTEGER NOT NULL,
                                    keywords TEXT NOT NULL, updated_at INTEGER NOT NULL);
        INSERT INTO profile_facts VALUES ('name', 'Alex', 1, '[]', 1600000000000);
        INSERT INTO profile_facts VALUES ('editor', 'helix', 0, '["editor"]', 1600000001000);
    """)
    conn.close()
    db = MemoryDatabase.open(path)
    store = ProfileStore(db)
    rows = {f.key: f for f in store.list()}
    assert rows["name"].valid_from == 1600000000000 and rows["name"].active and rows["name"].pinned
    assert rows["editor"].keywords == ("editor",) and not rows["editor"].pinned
    assert rows["editor"].valid_from == 1600000001000
    store.set("name", "Alex Kim")
    assert [f.value for f in store.history("name")] == ["Alex", "Alex Kim"]
    db.close()
    again = MemoryDatabase.open(path)  # idempotent: a second boot changes nothing
    assert len(ProfileStore(again).all_rows()) == 3
    again.close()


def test_profile_invariant_5_renderer_shows_active_rows_only_and_prefix_is_untouched(tmp_path: Path) -> None:
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    store = ProfileStore(db)
    store.set("language", "ru")
    store.set("language", "en")
    db.close()
    runtime = make_memory_runtime(tmp_path, plugins=["memory_profile"])
    body = phase(runtime, "memory-profile").sections("s", "hi")[0].body
    assert unframed(body) == "- language: en" and body.startswith("- language: en (#2, ")  # the active row's id


async def test_profile_invariant_5b_stable_prefix_bytes_do_not_change_with_history(tmp_path: Path) -> None:
    provider = RoutingProvider([calls(("memory.profile.set", {"key": "language", "value": "ru"})),
                                calls(("memory.profile.set", {"key": "language", "value": "en"})),
                                calls(("reply", {"text": "ok"}))], "NONE")
    runtime = make_memory_runtime(tmp_path / "s", provider)
    await runtime.run_turn("switch my language", working_dir=tmp_path)
    plan = await runtime.prompt_plan()
    framed = plan.profile.frame_stable_prefix(plan.stable_prefix_for(tmp_path))
    await runtime.close()
    assert all(r.prompt.startswith(framed) for r in provider.requests)
    assert "### profile\n- language: en\n###" in unframed(provider.requests[-1].prompt)


def test_profile_invariant_6_marker_validation_drops_malformed_rhs_at_parse_time() -> None:
    fact = parse_reflection("SET full_name=Alex [supersedes=not a valid key]", valid_key=is_valid_profile_key).facts[0]
    assert fact.supersedes is None and fact.key == "full_name"


def test_profile_invariant_7_valid_from_always_stamped_by_the_runtime_clock(profile: ProfileStore,
                                                                           frozen_clock: list[int]) -> None:
    fact = parse_reflection("SET city=Paris [valid_from=2001-01-01]", valid_key=is_valid_profile_key).facts[0]
    assert fact.valid_from is None
    assert parse_reflection("SET city=Paris [valid_from=now]", valid_key=is_valid_profile_key).facts[0].valid_from == "now"
    frozen_clock.append(1_800_000_000_000)
    stored = profile.set("city", "Paris")
    assert stored.valid_from == 1_800_000_000_000 == stored.created_at


async def test_profile_invariant_8_no_new_top_level_config_and_tool_fields_are_additive(tmp_path: Path) -> None:
    assert [f.name for f in attrs.fields(ProfileConfig)] == ["enabled", "max_tokens", "contextual_keyword_gate"]
    runtime = make_memory_runtime(tmp_path / "s", plugins=["memory_profile"])
    result = await runtime.registry.get("memory.profile.set").run(
        {"key": "editor", "value": "helix", "pinned": False, "keywords": ["editor"]}, make_tool_context(tmp_path))
    assert result.status == "ok" and result.details["fact"]["pinned"] is False
    await runtime.close()
