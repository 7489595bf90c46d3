"""Read a turn-lesson answer: one LESSON line (trigger, advice, tags) or the abstain sentinel."""

from __future__ import annotations

import re

import attrs

_LESSON = re.compile(r'^LESSON when="([^"\n]{1,200})"; do="([^"\n]{1,300})"(?:; tags=([a-z0-9][a-z0-9,\-]*))?\s*$')
ABSTAIN = "LESSON none"
MAX_TAGS = 5


class TurnLessonParseError(ValueError):
    """The answer is neither a LESSON line nor the abstain sentinel."""


@attrs.frozen
class TurnLesson:
    trigger: str
    advice: str
    tags: tuple[str, ...] = ()


def parse_turn_lesson(text: str) -> TurnLesson | None:
    """The lesson, or None when the model abstained; TurnLessonParseError otherwise (only
    the first line counts: a model that runs on after its line adds nothing)."""
    line = ((text or "").strip().splitlines() or [""])[0].strip()
    if line == ABSTAIN:
        return None
    found = _LESSON.match(line)
    if found is None:
        raise TurnLessonParseError(f"not a LESSON line: {line[:120]!r}")
    if not found.group(1).strip() or not found.group(2).strip():
        raise TurnLessonParseError(f"a LESSON line with an empty when or do: {line[:120]!r}")
    tags = tuple(dict.fromkeys(t for t in (found.group(3) or "").split(",") if t))
    return TurnLesson(found.group(1).strip(), found.group(2).strip(), tags[:MAX_TAGS])
