"""The tolerant reflection parser: valid lines land even next to malformed ones."""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.memory.profile_validation import is_valid_profile_key
from atomic_agent.plugins.memory_reflection.reflection_parser import ReflectionFact, ReflectionNote, parse_reflection


def parse(text: str, **options: Any) -> Any:
    """Parse with the profile store's own key rule, as the runner does."""
    return parse_reflection(text, valid_key=is_valid_profile_key, **options)


def test_none_alone_is_none() -> None:
    for text in ("NONE", "none.", "  NONE\n", "- NONE"):
        parsed = parse(text)
        assert parsed.said_none and not parsed.facts and not parsed.notes and not parsed.rejected


def test_set_lines_pinned_and_contextual() -> None:
    parsed = parse("SET preferred_language=English\n"
                              "SET editor=helix [pinned=false; keywords=editor, vim]")
    assert parsed.facts == (ReflectionFact("preferred_language", "English"),
                            ReflectionFact("editor", "helix", pinned=False, keywords=("editor", "vim")))


def test_note_lines_with_and_without_tags() -> None:
    parsed = parse("NOTE the build needs ninja [build, tooling]\nNOTE plain observation\n"
                              "NOTE array looks like [1, 2]? no: [not a tag!!]")
    assert parsed.notes[0] == ReflectionNote("the build needs ninja", ("build", "tooling"))
    assert parsed.notes[1] == ReflectionNote("plain observation")
    assert parsed.notes[2].tags == () and parsed.notes[2].content.endswith("[not a tag!!]")


def test_malformed_lines_are_rejected_and_valid_lines_still_land() -> None:
    parsed = parse("Sure! Here is what I found:\nSET name=Alex\nSET =nothing\nSET broken\n"
                              "NOTE kept note\nrandom chatter")
    assert [f.key for f in parsed.facts] == ["name"]
    assert [n.content for n in parsed.notes] == ["kept note"]
    assert len(parsed.rejected) == 4 and not parsed.said_none


def test_bullets_numbering_case_and_colons_are_tolerated() -> None:
    parsed = parse("1. set Name: Alex\n- note: remember the dentist\n* SET city = Lisbon")
    assert [(f.key, f.value) for f in parsed.facts] == [("name", "Alex"), ("city", "Lisbon")]
    assert parsed.notes[0].content == "remember the dentist"


def test_profile_markers_supersedes_and_valid_from_now() -> None:
    parsed = parse("SET full_name=Alex Kim [supersedes=name; valid_from=now]")
    assert parsed.facts == (ReflectionFact("full_name", "Alex Kim", supersedes="name", valid_from="now"),)


def test_malformed_supersedes_is_dropped_at_parse_time() -> None:
    parsed = parse("SET full_name=Alex [supersedes=not a valid key]")
    assert parsed.facts[0].supersedes is None and parsed.facts[0].value == "Alex"
    assert "supersedes" in parsed.rejected[0].reason


def test_non_now_valid_from_is_dropped_silently() -> None:
    for rhs in ("2020-01-01", "yesterday", "1700000000"):
        parsed = parse(f"SET city=Paris [valid_from={rhs}]")
        assert parsed.facts[0].valid_from is None and parsed.facts[0].value == "Paris" and not parsed.rejected


def test_unknown_bracket_content_stays_in_the_value() -> None:
    assert parse("SET shape=[a, b]").facts[0].value == "[a, b]"


def test_a_line_cut_by_the_token_limit_is_dropped() -> None:
    parsed = parse("SET name=Alex\nSET city=Lis", drop_last_line=True)
    assert [f.key for f in parsed.facts] == ["name"] and parsed.rejected[0].reason == "cut off by the token limit"


def test_repeated_marker_groups_are_all_peeled_off_the_value() -> None:
    fact = parse("SET full_name=Alex Kim [supersedes=name] [supersedes=full_name] [pinned=false; "
                            "keywords=x]").facts[0]
    assert (fact.value, fact.supersedes, fact.pinned, fact.keywords) == ("Alex Kim", "name", False, ("x",))
