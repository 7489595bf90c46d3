"""`{{body.a.b}}` substitution from a webhook's JSON body: paths only, no expressions.

A string value is inserted as it is, anything else as compact JSON; a list is indexed by
number (`{{body.items.0.name}}`). A path the body does not have is an error naming it.
"""

from __future__ import annotations

import json
import re
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*body((?:\.[A-Za-z0-9_\-]+)*)\s*\}\}")
MAX_RENDERED_CHARS = 20_000


class TemplatePathError(ValueError):
    def __init__(self, path: str) -> None:
        super().__init__(f"the template names body{path}, which the request body does not have")
        self.path = f"body{path}"


def _lookup(body: Any, path: str) -> Any:
    value = body
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise TemplatePathError(path)
    return value


def render_template(template: str, body: Any) -> str:
    def fill(match: re.Match[str]) -> str:
        value = _lookup(body, match.group(1))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    rendered = PLACEHOLDER.sub(fill, template)
    if len(rendered) > MAX_RENDERED_CHARS:
        rendered = rendered[:MAX_RENDERED_CHARS] + " … [truncated]"
    return rendered
