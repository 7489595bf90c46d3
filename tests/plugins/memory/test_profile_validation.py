"""The profile validator: keys and values over the limits, contextual facts without keywords."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.plugins.memory.profile_validation import is_valid_profile_key, validate_fact


@pytest.mark.parametrize("key, value, kwargs, fragment", [
    ("", "v", {}, "non-empty"),
    ("k" * 65, "v", {}, "use at most 64"),
    ("has space", "v", {}, "may hold only"),
    ("_leading", "v", {}, "may hold only"),
    ("name", "", {}, "non-empty"),
    ("name", "v" * 201, {}, "201 characters; use at most 200"),
    ("name", "two\nlines", {}, "one line"),
    ("name", "v", {"pinned": "no"}, "true or false"),
    ("name", "v", {"pinned": False}, "needs keywords"),
    ("name", "v", {"keywords": [f"k{i}" for i in range(11)]}, "at most 10 keywords"),
    ("name", "v", {"keywords": ["x" * 33]}, "at most 32"),
    ("name", "v", {"supersedes_key": "not a key"}, "supersedes key"),
])
def test_over_limit_and_malformed_facts_are_refused(key: str, value: str, kwargs: dict, fragment: str) -> None:
    with pytest.raises(MemoryValidationError) as caught:
        validate_fact(key, value, **kwargs)
    assert fragment in str(caught.value)


def test_keys_are_normalised_and_keywords_deduplicated() -> None:
    fact = validate_fact("  Preferred_Language ", "  English ", keywords="Code, code , ,Rust")
    assert (fact.key, fact.value, fact.keywords) == ("preferred_language", "English", ("code", "rust"))
    assert is_valid_profile_key("full_name") and not is_valid_profile_key("full name")


def test_a_refused_set_writes_nothing(database: MemoryDatabase) -> None:
    store = ProfileStore(database)
    with pytest.raises(MemoryValidationError):
        store.set("name", "x" * 500)
    assert store.count(active_only=False) == 0
