"""Read a reflection completion line by line; one bad line never spoils the others.

Accepted shapes (the grammar produces exactly these; the parser also takes them from
providers without grammar transport, with bullets, numbering or odd case around them):

    NONE
    SET key=value
    SET key=value [pinned=false; keywords=a,b; supersedes=old_key; valid_from=now]
    NOTE free text [tag1, tag2]

Markers are validated here: a malformed `supersedes` key and any `valid_from` other than
`now` are dropped (the store always stamps the time itself). Values are validated again,
by the same validators the tools use, when they are written.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

_BULLET = re.compile(r"^\s*(?:[-*•]+|\d{1,2}[.)])\s*")
_SET = re.compile(r"^SET\s+([^=\s:]+)\s*[=:]\s*(.+)$", re.IGNORECASE)
_NOTE = re.compile(r"^NOTE\s*[:\-]?\s+(.+)$", re.IGNORECASE)
_NONE = re.compile(r"^NONE[.!]?$", re.IGNORECASE)
_TRAILING_BRACKET = re.compile(r"^(.*?)\s*\[([^\[\]]*)\]\s*$")
_TAG = re.compile(r"^#?[\w][\w:.\-/ ]{0,31}$")
_TYPE_MARK = re.compile(r"^\[type=([^\]\s]{1,32})\] (.*)$", re.IGNORECASE)
NOTE_TYPES = ("event", "behavior", "knowledge", "skill")
TYPE_TAG_PREFIX = "type:"
MARKER_NAMES = ("pinned", "keywords", "supersedes", "valid_from")


@attrs.frozen
class ReflectionFact:
    key: str
    value: str
    pinned: bool = True
    keywords: tuple[str, ...] = ()
    supersedes: str | None = None
    valid_from: str | None = None  # "now" or None; audit only, the store stamps the clock


@attrs.frozen
class ReflectionNote:
    content: str
    tags: tuple[str, ...] = ()


@attrs.frozen
class RejectedLine:
    line: str
    reason: str


@attrs.frozen
class ParsedReflection:
    facts: tuple[ReflectionFact, ...] = ()
    notes: tuple[ReflectionNote, ...] = ()
    said_none: bool = False
    rejected: tuple[RejectedLine, ...] = ()


def _markers(body: str) -> dict[str, str] | None:
    """`pinned=false; keywords=a,b` -> dict, or None when the brackets are not a marker."""
    clauses = [c.strip() for c in body.split(";") if c.strip()]
    found: dict[str, str] = {}
    for clause in clauses:
        name, eq, value = clause.partition("=")
        name = name.strip().lower()
        if not eq or name not in MARKER_NAMES:
            return None
        found[name] = value.strip()
    return found if found else None


def _parse_set(key: str, rest: str, rejected: list[RejectedLine], line: str,
               is_valid_profile_key: Callable[[str], bool]) -> ReflectionFact | None:
    value, pinned, supersedes, valid_from = rest.strip(), True, None, None
    keywords: tuple[str, ...] = ()
    markers: dict[str, str] | None = None
    while (bracket := _TRAILING_BRACKET.match(value)) is not None:  # peel every trailing marker group
        found = _markers(bracket.group(2))
        if found is None:
            break
        markers = {**(markers or {}), **found}  # peeled right to left: the first group written wins
        value = bracket.group(1).strip()
    if markers is not None:
        pin = markers.get("pinned", "true").lower()
        if pin not in ("true", "false"):
            rejected.append(RejectedLine(line, "pinned marker is not true/false"))
        pinned = pin != "false"
        keywords = tuple(w.strip() for w in markers.get("keywords", "").split(",") if w.strip())
        sup = markers.get("supersedes")
        if sup:
            if is_valid_profile_key(sup):
                supersedes = sup.lower()
            else:
                rejected.append(RejectedLine(line, "supersedes marker is not a valid key (dropped)"))
        valid_from = "now" if markers.get("valid_from", "").lower() == "now" else None
    value = value.strip().strip('"').strip()
    if not value:
        rejected.append(RejectedLine(line, "SET without a value"))
        return None
    return ReflectionFact(key.strip().lower(), value, pinned, keywords, supersedes, valid_from)


def _parse_note(rest: str, typed: bool = False) -> ReflectionNote:
    content = rest.strip()
    tags: tuple[str, ...] = ()
    note_type = None
    if typed:
        mark = _TYPE_MARK.match(content)
        if mark:  # a known type becomes a type:X tag; an unknown one is dropped, the body kept
            kind = mark.group(1).lower()
            note_type = kind if kind in NOTE_TYPES else None
            content = mark.group(2).strip()
    bracket = _TRAILING_BRACKET.match(content)
    if bracket:
        items = [t.strip() for t in bracket.group(2).split(",") if t.strip()]
        if items and all(_TAG.match(t) for t in items):
            content, tags = bracket.group(1).strip(), tuple(items)
    if note_type is not None:
        tags = (TYPE_TAG_PREFIX + note_type, *(t for t in tags if not t.lower().startswith(TYPE_TAG_PREFIX)))
    return ReflectionNote(content, tags)


def parse_reflection(text: str, *, valid_key: Callable[[str], bool], drop_last_line: bool = False,
                     typed: bool = False) -> ParsedReflection:
    """Every SET and NOTE line of `text`; `drop_last_line` for a completion cut by its token limit.
    `typed` (typed-notes on) reads a leading `[type=X] ` marker on NOTE lines.
    `valid_key` is the profile store's key rule: a supersedes marker naming a key it refuses
    is dropped (and reported) while the fact itself is kept."""
    lines = [ln for ln in text.replace("\r\n", "\n").split("\n")]
    if drop_last_line and lines:
        cut = lines.pop()
        rejected_cut = [RejectedLine(cut, "cut off by the token limit")] if cut.strip() else []
    else:
        rejected_cut = []
    facts: list[ReflectionFact] = []
    notes: list[ReflectionNote] = []
    rejected: list[RejectedLine] = list(rejected_cut)
    said_none = False
    for raw in lines:
        line = _BULLET.sub("", raw).strip().strip("`").strip()
        if not line:
            continue
        if _NONE.match(line):
            said_none = True
            continue
        set_match = _SET.match(line)
        if set_match:
            fact = _parse_set(set_match.group(1), set_match.group(2), rejected, raw, valid_key)
            if fact is not None:
                facts.append(fact)
            continue
        note_match = _NOTE.match(line)
        if note_match:
            note = _parse_note(note_match.group(1), typed)
            if note.content:
                notes.append(note)
            continue
        rejected.append(RejectedLine(raw, "not a SET, NOTE or NONE line"))
    return ParsedReflection(tuple(facts), tuple(notes), said_none and not facts and not notes, tuple(rejected))
