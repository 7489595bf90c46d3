"""The serializer: canonical JSON text, with attrs records (un)structured through cattrs.

Values are stored as canonical JSON (sorted keys, no whitespace, no NaN), so two equal values
have equal text and compare-and-set compares text in every implementation. No pickle: a store
must stay readable by another process, another version and another backend.
"""

from __future__ import annotations

import json
import math
from typing import Any, Protocol, TypeVar, runtime_checkable

import attrs

T = TypeVar("T")
DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024


@runtime_checkable
class Serializer(Protocol):
    def encode(self, value: Any, what: str = "value") -> str:
        """Canonical JSON text of a JSON value or attrs record; ValueError naming `what` if not
        serialisable."""
        ...

    def decode(self, text: str) -> Any: ...

    def unstructure(self, record: Any) -> Any: ...

    def structure(self, value: Any, cls: type[T]) -> T: ...


def _check_json(value: Any, path: str) -> None:
    """Refuse what json.dumps would silently coerce (tuples, non-str keys) or write as
    non-standard JSON (NaN), naming where in the value it sits."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{path} is {value!r}; JSON has no NaN or infinity, store a string or null")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"{path} has a {type(key).__name__} key {key!r}; JSON object keys must be str")
            _check_json(item, f"{path}[{key!r}]")
        return
    raise ValueError(f"{path} is a {type(value).__name__}, which is not JSON; convert it to str, "
                     "number, bool, None, list, dict or an attrs record first")


class JsonSerializer:
    """Serializer over stdlib json; cattrs converts attrs records to and from plain dicts."""

    def __init__(self, max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES) -> None:
        self.max_value_bytes = max_value_bytes
        self._converter: Any = None

    def _cattrs(self) -> Any:
        if self._converter is None:
            import cattrs  # heavy-ish; only needed once records are (un)structured

            self._converter = cattrs.Converter(forbid_extra_keys=True)
        return self._converter

    def unstructure(self, record: Any) -> Any:
        return self._cattrs().unstructure(record)

    def structure(self, value: Any, cls: type[T]) -> T:
        """Build `cls` from a stored value; a mismatch is a ValueError listing every problem as
        a path into the value (cattrs.transform_error)."""
        import cattrs

        try:
            return self._cattrs().structure(value, cls)
        except cattrs.BaseValidationError as exc:
            problems = "; ".join(cattrs.transform_error(exc))
            raise ValueError(f"the stored value is not a valid {cls.__name__}: {problems}") from exc

    def encode(self, value: Any, what: str = "value") -> str:
        if attrs.has(type(value)):
            value = self.unstructure(value)
        _check_json(value, what)
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        size = len(text.encode("utf-8"))
        if size > self.max_value_bytes:
            raise ValueError(f"{what} is {size} bytes as JSON; the limit is {self.max_value_bytes} bytes. "
                             "Store large content elsewhere (a file) and keep a reference here")
        return text

    def decode(self, text: str) -> Any:
        return json.loads(text)
