"""The one validator every note write passes (tools, reflection, CLI, benchmarks)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from .memory_errors import MemoryValidationError

DEFAULT_MAX_CONTENT_CHARS = 2000
MAX_TAGS = 10
TAG_MAX_CHARS = 32
CONTEXT_MAX_CHARS = 4000
META_MAX_CHARS = 4000
SCOPES = ("global", "workdir")
TAG_PATTERN = re.compile(r"^[\w][\w:.\-/]*$")
SOURCE_PATTERN = re.compile(r"^[a-z][a-z0-9_\-]{0,31}$")


@attrs.frozen
class ValidNote:
    content: str
    tags: tuple[str, ...]
    context: str
    source: str
    scope: str
    working_dir: str | None
    session_id: str | None
    meta_json: str | None


def normalize_tags(tags: Iterable[object] | None) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = tags.split(",")
    out: list[str] = []
    for raw in tags:
        if not isinstance(raw, str):
            raise MemoryValidationError(f"note tags must be strings, got {raw!r}")
        tag = "-".join(raw.strip().lower().lstrip("#").split())
        if not tag:
            continue
        if len(tag) > TAG_MAX_CHARS or not TAG_PATTERN.match(tag):
            raise MemoryValidationError(f"note tag {tag[:40]!r} must be 1-{TAG_MAX_CHARS} letters, digits or "
                                        "'_', ':', '.', '-', '/' (e.g. project-x)")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise MemoryValidationError(f"a note takes at most {MAX_TAGS} tags, got {len(out)}")
    return tuple(out)


def validate_note(content: object, tags: Iterable[object] | None = None, *, source: str = "tool",
                  scope: str = "global", working_dir: str | None = None, session_id: str | None = None,
                  context: str = "", meta: Mapping[str, Any] | None = None,
                  max_content_chars: int = DEFAULT_MAX_CONTENT_CHARS) -> ValidNote:
    if not isinstance(content, str) or not content.strip():
        raise MemoryValidationError("note content must be a non-empty string")
    text = content.strip()
    if len(text) > max_content_chars:
        raise MemoryValidationError(f"note content is {len(text)} characters; the limit is {max_content_chars} "
                                    "(memoryNotes.maxContentChars). Split it into several notes")
    if scope not in SCOPES:
        raise MemoryValidationError(f"note scope {scope!r} must be one of {', '.join(SCOPES)}")
    if scope == "workdir" and not working_dir:
        raise MemoryValidationError("a note with scope 'workdir' needs workingDir")
    if not isinstance(context, str) or len(context) > CONTEXT_MAX_CHARS:
        raise MemoryValidationError(f"note context must be a string of at most {CONTEXT_MAX_CHARS} characters")
    if not isinstance(source, str) or not SOURCE_PATTERN.match(source):
        raise MemoryValidationError(f"note source {source!r} must be a short lowercase word such as tool")
    meta_json = None
    if meta:
        meta_json = json.dumps(dict(meta), ensure_ascii=False, sort_keys=True, default=str)
        if len(meta_json) > META_MAX_CHARS:
            raise MemoryValidationError(f"note meta is {len(meta_json)} characters as JSON; "
                                        f"use at most {META_MAX_CHARS}")
    return ValidNote(text, normalize_tags(tags), context.strip(), source, scope,
                     str(working_dir) if working_dir else None, session_id, meta_json)
