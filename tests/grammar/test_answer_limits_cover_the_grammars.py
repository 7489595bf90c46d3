"""A one-shot answer that is parsed whole (a lesson) must never be cut by its token limit:
a cut line cannot be parsed, and the call is wasted. A token is at least one character, so
a limit of at least the grammar's longest answer in characters is always enough."""

from __future__ import annotations

import math
import re
from pathlib import Path

from atomic_agent.plugins.memory_links import lesson_consolidator
from atomic_agent.plugins.memory_links.consolidation_config import ConsolidationConfig
from atomic_agent.plugins.memory_reflection import turn_lessons

_TOKEN = re.compile(r'\s+|"(?:\\.|[^"\\])*"|\[(?:\\.|[^\]\\])*\]|[A-Za-z][A-Za-z0-9-]*|\{\d+(?:,\d*)?\}|[()|?*+]')


def longest_answer(gbnf: str) -> float:
    """The most characters the grammar's `root` can produce (inf if unbounded). Covers the
    GBNF our grammars use: literals, character classes, rule references, groups,
    alternatives and the ?, *, + and {m,n} repetitions."""
    rules: dict[str, list[str]] = {}
    for line in gbnf.splitlines():
        if line.strip() and not line.lstrip().startswith("#") and "::=" in line:
            name, body = line.split("::=", 1)
            rules[name.strip()] = [t for t in _TOKEN.findall(body) if not t.isspace()]

    def rule(name: str, seen: frozenset[str]) -> float:
        if name in seen:
            return math.inf  # recursive: unbounded
        return alternatives(rules[name], 0, seen | {name})[0]

    def alternatives(tokens: list[str], at: int, seen: frozenset[str]) -> tuple[float, int]:
        best, at = sequence(tokens, at, seen)
        while at < len(tokens) and tokens[at] == "|":
            length, at = sequence(tokens, at + 1, seen)
            best = max(best, length)
        return best, at

    def sequence(tokens: list[str], at: int, seen: frozenset[str]) -> tuple[float, int]:
        total = 0.0
        while at < len(tokens) and tokens[at] not in ("|", ")"):
            token = tokens[at]
            if token == "(":
                length, at = alternatives(tokens, at + 1, seen)
                at += 1  # the closing parenthesis
            else:
                at += 1
                if token.startswith('"'):
                    length = len(token[1:-1].encode().decode("unicode_escape"))
                elif token.startswith("["):
                    length = 1
                else:
                    length = rule(token, seen)
            if at < len(tokens) and tokens[at] in ("?", "*", "+") or at < len(tokens) and tokens[at].startswith("{"):
                mark = tokens[at]
                at += 1
                if mark in ("*", "+"):
                    length = math.inf if length else 0
                elif mark.startswith("{"):
                    bounds = mark[1:-1].split(",")
                    if len(bounds) == 2 and not bounds[1]:
                        length = math.inf if length else 0
                    else:
                        length *= int(bounds[-1])
            total += length
        return total, at

    return rule("root", frozenset())


def _grammar(module: object, name: str) -> str:
    return (Path(module.__file__).parent / "grammars" / name).read_text()  # type: ignore[attr-defined]


def test_the_measure_counts_repetitions_groups_and_alternatives() -> None:
    assert longest_answer('root ::= "ab" | x\nx ::= [a-z] [0-9]{0,3} ( "," y ){0,2}\ny ::= "zz"?') == 1 + 3 + 2 * 3
    assert longest_answer('root ::= "a" [b]*') == math.inf
    assert longest_answer('root ::= "a" root?') == math.inf


def test_a_turn_lesson_the_grammar_allows_is_never_cut_by_its_token_limit() -> None:
    longest = longest_answer(_grammar(turn_lessons, turn_lessons.GRAMMAR_FILE))
    assert 600 < longest <= turn_lessons.N_PREDICT


def test_a_consolidated_lesson_the_grammar_allows_is_never_cut_by_the_default_token_limit() -> None:
    longest = longest_answer(_grammar(lesson_consolidator, lesson_consolidator.GRAMMAR_FILE))
    assert 500 < longest <= ConsolidationConfig().n_predict
