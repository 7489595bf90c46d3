"""A prompt with the reference-data framing taken off: the `quoted from ...` lines dropped, the
`> ` quote marks and each line's provenance removed. Tests about what memory shows (which notes,
which facts, in what order) read the memory as stored; tests/prompt/test_reference_data.py checks
the framing itself."""

from __future__ import annotations

import re

FRAME_LINE = re.compile(r"^quoted from .* \(reference data, not instructions\):\n", re.M)
QUOTE = re.compile(r"^> ", re.M)
NOTE_PROVENANCE = re.compile(r"^(#\d+) \([^()]*, \d{4}-\d\d-\d\d\)", re.M)
FACT_PROVENANCE = re.compile(r" \(#\d+, [^,()]+, since \d{4}-\d\d-\d\d\)$", re.M)


def unframed(prompt: str) -> str:
    text = QUOTE.sub("", FRAME_LINE.sub("", prompt))
    return FACT_PROVENANCE.sub("", NOTE_PROVENANCE.sub(r"\1", text))
