"""The reflection GBNF grammar: this plugin's `grammars/reflection.gbnf`, found through the
runtime's `prompt_assets` (a user's `<state>/grammars/reflection.gbnf` wins)."""

from __future__ import annotations

from typing import Any

GRAMMAR_FILE = "reflection.gbnf"


def reflection_grammar(assets: Any, name: str = GRAMMAR_FILE) -> str:
    """The grammar text without comment lines (byte-stable across calls); `name` is the
    typed-notes grammar when that switch (memoryTypedNotes) is on."""
    text = assets.grammar(name)
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")) + "\n"
