"""Check a call's args against the tool's JSON Schema before the tool runs."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=512)
def _validator_for(schema_json: str) -> Any:
    import json

    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def args_errors(schema: Mapping[str, Any], args: Mapping[str, Any], limit: int = 3) -> list[str]:
    """Human-readable problems with `args` (empty when valid), at most `limit` of them."""
    import json

    validator = _validator_for(json.dumps(schema, sort_keys=True))
    problems = []
    for error in sorted(validator.iter_errors(dict(args)), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "args"
        problems.append(f"{where}: {error.message}")
        if len(problems) >= limit:
            break
    return problems
