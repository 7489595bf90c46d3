"""Write parsed entries through the stores' own validators, within the per-call caps.

An entry the validators refuse is recorded and skipped; the rest still land. A locked or
refused database is not an entry problem: it propagates and the call counts as failed.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from .reflection_parser import ParsedReflection, RejectedLine

REFLECTION_TAG = "reflection"
MAX_NOTE_TAGS = 10
_WORD = re.compile(r"\w+")


@attrs.frozen
class WriteReport:
    facts: tuple[Any, ...] = ()
    notes: tuple[Any, ...] = ()
    rejected: tuple[RejectedLine, ...] = ()

    @property
    def written(self) -> int:
        return len(self.facts) + len(self.notes)


def echoes_instructions(entry: str, instructions: str) -> bool:
    """Small models copy the prompt's own examples (`SET key=value`); those are not memories."""
    flat = " ".join(entry.lower().split())
    return bool(flat) and flat in " ".join(instructions.lower().split())


def said_by_user(value: str, user_text: str) -> bool:
    """A profile fact is about the user, so most of its words are ones the user wrote; a
    value the model made up (or took from elsewhere in its prompt) is not."""
    words = _WORD.findall(value.lower())
    said = set(_WORD.findall(user_text.lower()))
    return bool(words) and 2 * sum(word in said for word in words) >= len(words)


def write_reflection(parsed: ParsedReflection, *, profile: Any | None, notes: Any | None, max_facts: int,
                     max_notes: int, session_id: str, invalid: type[Exception], instructions: str = "",
                     user_text: str | None = None, context: str = "") -> WriteReport:
    """Write what passes into the stores; `invalid` is the stores' validation error (a line
    the store refuses is rejected with its reason, the rest are still written). With
    `user_text`, a fact whose value the user did not say is rejected. Notes are stored with
    `context` as their recall key (see note_context)."""
    rejected = list(parsed.rejected)
    facts: list[Any] = []
    parsed_facts = [f for f in parsed.facts if not echoes_instructions(f"SET {f.key}={f.value}", instructions)]
    parsed_notes = [n for n in parsed.notes if not echoes_instructions(n.content, instructions)]
    rejected += [RejectedLine(f"SET {f.key}={f.value}", "copies the prompt's example") for f in parsed.facts
                 if f not in parsed_facts]
    rejected += [RejectedLine(f"NOTE {n.content}", "copies the prompt's example") for n in parsed.notes
                 if n not in parsed_notes]
    if user_text is not None:
        rejected += [RejectedLine(f"SET {f.key}={f.value}", "the user did not say it") for f in parsed_facts
                     if not said_by_user(f.value, user_text)]
        parsed_facts = [f for f in parsed_facts if said_by_user(f.value, user_text)]
    for i, fact in enumerate(parsed_facts):
        line = f"SET {fact.key}={fact.value}"
        if profile is None:
            rejected.append(RejectedLine(line, "the profile channel is off"))
        elif i >= max_facts:
            rejected.append(RejectedLine(line, f"over maxFactsPerCall ({max_facts})"))
        else:
            try:
                facts.append(profile.set(fact.key, fact.value, pinned=fact.pinned, keywords=fact.keywords,
                                         supersedes_key=fact.supersedes, source="reflection"))
            except invalid as exc:
                rejected.append(RejectedLine(line, str(exc)))
    stored: list[Any] = []
    for i, note in enumerate(parsed_notes):
        line = f"NOTE {note.content}"
        if notes is None:
            rejected.append(RejectedLine(line, "the notes channel is off"))
        elif i >= max_notes:
            rejected.append(RejectedLine(line, f"over maxNotesPerCall ({max_notes})"))
        else:
            tags = [t for t in note.tags if t.strip().lower() != REFLECTION_TAG][: MAX_NOTE_TAGS - 1]
            try:
                stored.append(_store_note(notes, note.content, tags, session_id, invalid, context))
            except invalid as exc:
                rejected.append(RejectedLine(line, str(exc)))
    return WriteReport(tuple(facts), tuple(stored), tuple(rejected))


def _store_note(notes: Any, content: str, tags: list[str], session_id: str, invalid: type[Exception],
                context: str = "") -> Any:
    """Store with the model's tags; if only the tags are bad, keep the observation without them."""
    try:
        return notes.store(content, [*tags, REFLECTION_TAG], source="reflection", session_id=session_id,
                           context=context).note
    except invalid:
        if not tags:
            raise
        return notes.store(content, [REFLECTION_TAG], source="reflection", session_id=session_id,
                           context=context).note
