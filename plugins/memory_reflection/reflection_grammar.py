"""The reflection GBNF grammar, read from the `atomic_agent.grammars` package data."""

from __future__ import annotations

from functools import lru_cache

GRAMMAR_FILE = "reflection.gbnf"


@lru_cache(maxsize=1)
def reflection_grammar() -> str:
    """The grammar text without comment lines (byte-stable across calls)."""
    from importlib import resources

    text = (resources.files("atomic_agent.grammars") / GRAMMAR_FILE).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")) + "\n"
