"""The serializer: canonical JSON, attrs records, and clear refusals."""

from __future__ import annotations

import attrs
import pytest

from atomic_agent.persistence.json_serializer import JsonSerializer


@attrs.frozen
class Note:
    text: str
    tags: list[str] = attrs.field(factory=list)


def test_equal_values_encode_to_identical_text():
    s = JsonSerializer()
    assert s.encode({"b": 1, "a": [1, {"y": 2, "x": 1}]}) == s.encode({"a": [1, {"x": 1, "y": 2}], "b": 1})
    assert s.encode("h\u00e9") == '"h\u00e9"'


def test_attrs_records_round_trip_through_cattrs():
    s = JsonSerializer()
    text = s.encode(Note("hello", ["a"]))
    assert s.structure(s.decode(text), Note) == Note("hello", ["a"])


def test_unknown_keys_are_refused_when_structuring():
    with pytest.raises(ValueError, match="not a valid Note: .*surprise"):
        JsonSerializer().structure({"text": "x", "surprise": 1}, Note)


@pytest.mark.parametrize("value, problem", [
    ({"k": {1, 2}}, r"value\['k'\] is a set"), ((1, 2), "is a tuple"), ({1: "x"}, "keys must be str"),
    ([float("inf")], "no NaN or infinity"), (b"raw", "is a bytes"),
])
def test_non_json_values_are_refused_naming_where(value, problem):
    with pytest.raises(ValueError, match=problem):
        JsonSerializer().encode(value)


def test_oversized_values_are_refused_with_the_limit():
    with pytest.raises(ValueError, match="is 1002 bytes as JSON; the limit is 1000 bytes"):
        JsonSerializer(max_value_bytes=1000).encode("x" * 1000)
