"""Keys: validation, prefix ranges and escaped key paths."""

from __future__ import annotations

import pytest

from atomic_agent.persistence.key_space import (
    key_path,
    key_path_prefix,
    prefix_upper_bound,
    split_key_path,
    validate_name,
)


def test_every_key_with_the_prefix_sorts_below_its_upper_bound():
    for prefix in ("a", "queue.s1.", "z\uffff", "\U0010ffff", "a\U0010ffff", "x\ud7ff"):
        bound = prefix_upper_bound(prefix)
        for suffix in ("", "\x01", "\uffff", "\U0010ffff" * 3, "zzz"):
            assert bound is None or prefix + suffix < bound
    assert prefix_upper_bound("\U0010ffff") is None
    assert prefix_upper_bound("ab") == "ac"


def test_segments_with_dots_stay_one_level():
    assert key_path("a.b", "c") != key_path("a", "b.c")
    assert split_key_path(key_path("a.b", "c%2E", "d")) == ["a.b", "c%2E", "d"]
    assert key_path_prefix("queue", "s.1") == "queue.s%2E1."


@pytest.mark.parametrize("bad, problem", [
    ("", "must not be empty"), (3, "must be a str"), ("a\x00b", "NUL"), ("x" * 2000, "limit"),
    ("\ud800", "lone surrogates"),
])
def test_bad_names_are_refused_with_the_reason(bad, problem):
    with pytest.raises(ValueError, match=problem):
        validate_name(bad)


def test_empty_segments_are_refused():
    with pytest.raises(ValueError, match="non-empty"):
        key_path("queue", "", "x")
