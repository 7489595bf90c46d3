"""Read the reflection model's lesson votes: NONE, or `UPVOTE lesson:<id>` / `DOWNVOTE lesson:<id>`
lines. Only ids the turn was shown count (the allowlist); one vote per lesson, at most
`max_votes`; every other line is rejected with its reason and never reaches the store."""

from __future__ import annotations

import re
from collections.abc import Collection

import attrs

MAX_VOTES = 8
_VOTE = re.compile(r"^(UPVOTE|DOWNVOTE) lesson:([1-9][0-9]{0,8})$")


@attrs.frozen
class ParsedVotes:
    votes: tuple[tuple[int, bool], ...] = ()  # (lesson id, up)
    rejected: tuple[tuple[str, str], ...] = ()  # (line, reason: malformed | out_of_allowlist | duplicate | over_cap)


def parse_lesson_votes(text: str, allow: Collection[int], max_votes: int = MAX_VOTES) -> ParsedVotes:
    votes: list[tuple[int, bool]] = []
    rejected: list[tuple[str, str]] = []
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    if lines == ["NONE"]:
        return ParsedVotes()
    for line in lines:
        found = _VOTE.match(line)
        if found is None:
            rejected.append((line[:120], "malformed"))
            continue
        lesson_id = int(found.group(2))
        if lesson_id not in allow:
            rejected.append((line, "out_of_allowlist"))
        elif any(v[0] == lesson_id for v in votes):
            rejected.append((line, "duplicate"))
        elif len(votes) >= max_votes:
            rejected.append((line, "over_cap"))
        else:
            votes.append((lesson_id, found.group(1) == "UPVOTE"))
    return ParsedVotes(tuple(votes), tuple(rejected))
