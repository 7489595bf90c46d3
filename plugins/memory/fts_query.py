"""Turn free text into a safe FTS5 MATCH expression.

User text never reaches MATCH as syntax: it is split into word tokens, stop words and
single characters are dropped, and each remaining token is written as a quoted FTS5
string joined by OR. Quotes, NEAR, `*`, `^`, column filters and unbalanced parentheses
are therefore just characters that separate words.
"""

from __future__ import annotations

import re

from .stop_words import STOP_WORDS

MAX_TERMS = 32
_WORD = re.compile(r"\w+", re.UNICODE)


def query_terms(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """Distinct lowercase content words of `text`, in first-seen order."""
    terms: list[str] = []
    for match in _WORD.finditer(text.lower()):
        word = match.group(0).strip("_")
        if len(word) < 2 or word in STOP_WORDS or word in terms:
            continue
        terms.append(word)
        if len(terms) >= max_terms:
            break
    return terms


def build_match_query(text: str, max_terms: int = MAX_TERMS) -> str | None:
    """`"alpha" OR "beta"`, or None when the text holds no searchable word."""
    terms = query_terms(text, max_terms)
    if not terms:
        return None
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)
