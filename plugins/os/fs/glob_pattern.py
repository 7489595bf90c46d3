"""Glob patterns as regular expressions: `*`, `?`, `[...]`, `{a,b}` and `**` across dirs.

`match_path` matches the path relative to the search root. With `basename_if_no_slash`
(ripgrep's `--glob` rule) a pattern without `/` matches the file name at any depth.
"""

from __future__ import annotations

import re
from functools import lru_cache


class GlobPatternError(ValueError):
    pass


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n, depth = 0, len(pattern), 0
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1:end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
                i = end
        elif ch == "{":
            depth += 1
            out.append("(?:")
        elif ch == "}" and depth:
            depth -= 1
            out.append(")")
        elif ch == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(ch))
        i += 1
    if depth:
        raise GlobPatternError(f"unbalanced '{{' in glob {pattern!r}")
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    if not pattern:
        raise GlobPatternError("the glob pattern is empty; e.g. \"**/*.py\"")
    try:
        return re.compile(r"\A" + _translate(pattern) + r"\Z", re.DOTALL)
    except re.error as exc:
        raise GlobPatternError(f"invalid glob {pattern!r}: {exc}") from None


def match_path(rel_path: str, pattern: str, basename_if_no_slash: bool = False) -> bool:
    regex = compile_glob(pattern)
    if basename_if_no_slash and "/" not in pattern:
        return regex.match(rel_path.rsplit("/", 1)[-1]) is not None
    return regex.match(rel_path) is not None
