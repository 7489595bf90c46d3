"""Parse a request body as JSON within limits: never a 500, whatever the bytes are.

Python's parser raises RecursionError on a body nested a few thousand levels deep and a
plain ValueError on an integer of more than 4300 digits; both are client errors. Bodies
that parse are also refused when nested deeper than MAX_DEPTH (no request shape is
deeper than a few levels; deep values would only reach code that recurses on them).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

MAX_DEPTH = 64


class JsonLimitError(ValueError):
    """The body is not JSON this server accepts; the message says why."""


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests containers deeper than `limit` (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def parse_json(raw: bytes) -> Any:
    try:
        value = json.loads(raw)
    except RecursionError:
        raise JsonLimitError(f"the JSON body is nested too deeply (the limit is {MAX_DEPTH} levels)") from None
    except json.JSONDecodeError as exc:
        raise JsonLimitError(f"the request body is not valid JSON ({exc})") from None
    except ValueError as exc:  # undecodable bytes, an integer with too many digits
        raise JsonLimitError(f"the request body is not acceptable JSON ({exc})") from None
    if depth_exceeds(value):
        raise JsonLimitError(f"the JSON body is nested deeper than {MAX_DEPTH} levels")
    return value
