"""Read the distillation answer: one LESSON line (trigger, advice, tags) or the abstain sentinel."""

from __future__ import annotations

import re

import attrs

_LESSON = re.compile(r'^LESSON when="([^"\n]{1,200})"; do="([^"\n]{1,600})"(?:; tags=([a-z0-9][a-z0-9,\-]*))?\s*$')
ABSTAIN = "LESSON none"


class LessonParseError(ValueError):
    """The answer is neither a LESSON line nor the abstain sentinel."""


@attrs.frozen
class DistilledLesson:
    trigger: str
    advice: str
    tags: tuple[str, ...] = ()


def parse_lesson(text: str) -> DistilledLesson | None:
    """The lesson, or None when the model abstained; LessonParseError otherwise."""
    line = (text or "").strip()
    if line == ABSTAIN:
        return None
    found = _LESSON.match(line)
    if found is None:
        raise LessonParseError(f"not a LESSON line: {line[:120]!r}")
    tags = tuple(t for t in (found.group(3) or "").split(",") if t)
    return DistilledLesson(found.group(1).strip(), found.group(2).strip(), tags[:5])
