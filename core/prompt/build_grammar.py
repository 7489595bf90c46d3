"""Assemble the tool-call GBNF sent with every grammar-transport step.

The shipped `grammars/tool-call.gbnf` holds the profile-independent part (array root,
call shape, bounded JSON values). This module adds what varies per session:

- `step-tool-name`: one alternative per working tool, sorted, JSON-encoded and escaped;
- `final-call`: one alternative per tool that ends the turn (`final_only`: reply, finish),
  whose args are exactly its text (`{"text": string}`) when it names a text argument;
- `lone-call` / `lone-tool-name`: the tools that ask for approval (`alone`), each a batch
  on its own, as the batch validator requires;
- `batch`: batchable working calls, or one lone call, or one final call;
- the call-count bound, from max_calls clamped into 1..HARD_MAX_TOOL_CALLS;
- for reasoning profiles, the prelude before the array: the bounded reasoning body, the
  close sentinel (and the open sentinel when the model writes it), then the bounded
  `prelude-trail-ws` seam, so a model cannot idle in whitespace after long thinking.

The output depends only on the inputs: the same names, profile and bound give the same bytes.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from importlib import resources

from atomic_agent.llm.model_profile import ModelProfile

# The hard ceiling on tool calls in one step, shared by the grammar and the parser.

# The grammar never allows more; the runtime's agent.maxParallelToolCalls soft cap sits below it.
HARD_MAX_TOOL_CALLS = 16


# Escaping arbitrary text into GBNF literals (quoted strings and character classes).

_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Inside [...] these would change the class's meaning, so they are always escaped.
_CLASS_SPECIALS = frozenset("\\]^-[")


def _escape_char(char: str, specials: frozenset[str]) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if char in specials:
        return "\\" + char
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    return char


def gbnf_string_literal(text: str) -> str:
    """`text` as a double-quoted GBNF literal that matches exactly those characters."""
    return '"' + "".join(_escape_char(char, frozenset()) for char in text) + '"'


def gbnf_excluding_class(chars: str) -> str:
    """A GBNF character class matching any single character except those in `chars`."""
    if not chars:
        raise ValueError("an excluding character class needs at least one character to exclude")
    unique = sorted(set(chars), key=chars.index)
    return "[^" + "".join(_escape_char(char, _CLASS_SPECIALS) for char in unique) + "]"


def json_string_literal(value: str) -> str:
    """A GBNF literal matching the JSON encoding of `value` (quotes included), e.g. "\\"os.fs.read\\""."""
    return gbnf_string_literal(json.dumps(value, ensure_ascii=False))


GRAMMAR_PACKAGE = "atomic_agent.grammars"
GRAMMAR_FILE = "tool-call.gbnf"
# Roughly 1.5k tokens of thinking; at the bound the grammar only allows the close sentinel.
REASONING_BODY_MAX_CHARS = 6000
PRELUDE_TRAIL_WS_RULE = "prelude-trail-ws ::= ( [ \\t\\n\\r] ){0,8}"

_RULE_LINE = re.compile(r"^([a-z][a-z0-9-]*) ::= (.+)$")
_CALL_BOUND = "{0,%d}" % (HARD_MAX_TOOL_CALLS - 1)
GENERATED_RULES = ("batch", "final-call", "step-tool-name", "lone-call", "lone-tool-name")


class GrammarSourceError(RuntimeError):
    """The shipped tool-call.gbnf is not in the shape the builder expects."""


def build_tool_call_grammar(
    tool_names: Sequence[str],
    profile: ModelProfile,
    max_calls: int = HARD_MAX_TOOL_CALLS,
    *,
    final_only: Mapping[str, str | None] | None = None,
    alone: Sequence[str] = (),
    reasoning_max_chars: int = REASONING_BODY_MAX_CHARS,
) -> str:
    """The complete GBNF for one step: root, reasoning prelude (if any), base rules, tool names.

    `final_only` maps each tool that ends the turn to its one text argument (None: any args);
    such a tool is a batch on its own, and so is each tool in `alone` (tools that ask for
    approval)."""
    names = _checked_tool_names(tool_names)
    finals = dict(final_only or {})
    lone = set(alone) - set(finals)
    step_names = [name for name in names if name not in finals and name not in lone]
    lone_names = [name for name in names if name in lone]
    final_names = [name for name in names if name in finals]
    if reasoning_max_chars < 1:
        raise ValueError(f"reasoning_max_chars must be at least 1, got {reasoning_max_chars}")
    calls = min(max(int(max_calls), 1), HARD_MAX_TOOL_CALLS)
    lines = [_root_rule(profile)]
    if profile.has_reasoning:
        lines.append(_reasoning_body_rule(profile, reasoning_max_chars))
        lines.append(PRELUDE_TRAIL_WS_RULE)
    for name, rule in _base_rules():
        if name == "root":
            continue
        if name in ("step-calls", "step-call") and not step_names:
            continue
        if name == "step-calls":
            rule = rule.replace(_CALL_BOUND, "{0,%d}" % (calls - 1))
        lines.append(rule)
    lines.append("batch ::= " + " | ".join((["step-calls"] if step_names else []) + (["lone-call"] if lone_names else [])
                                           + (["final-call"] if final_names else [])))
    if lone_names:
        lines.append(f'lone-call ::= "{{" ws {json_string_literal("tool")} ws ":" ws lone-tool-name ws "," ws '
                     f'{json_string_literal("args")} ws ":" ws object ws "}}"')
        lines.append("lone-tool-name ::= " + " | ".join(json_string_literal(name) for name in lone_names))
    if final_names:
        lines.append("final-call ::= " + " | ".join(_final_call(name, finals[name]) for name in final_names))
    if step_names:
        lines.append("step-tool-name ::= " + " | ".join(json_string_literal(name) for name in step_names))
    return "\n".join(lines) + "\n"


def tool_call_grammar_source() -> str:
    """The shipped tool-call.gbnf exactly as packaged (comments included)."""
    return resources.files(GRAMMAR_PACKAGE).joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")


@functools.cache
def _base_rules() -> tuple[tuple[str, str], ...]:
    """The shipped rules in file order, comments and blank lines dropped (they cost tokens)."""
    rules: list[tuple[str, str]] = []
    for number, raw in enumerate(tool_call_grammar_source().splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _RULE_LINE.match(line)
        if match is None:
            raise GrammarSourceError(
                f"{GRAMMAR_FILE} line {number}: expected one rule per line as 'name ::= body', got {raw!r}"
            )
        rules.append((match.group(1), line))
    defined = {name for name, _ in rules}
    generated = defined & set(GENERATED_RULES)
    if generated:
        raise GrammarSourceError(f"{GRAMMAR_FILE} must not define {', '.join(sorted(generated))}: "
                                 "they are generated from the tool registry")
    step_rules = [rule for name, rule in rules if name == "step-calls"]
    if len(step_rules) != 1 or step_rules[0].count(_CALL_BOUND) != 1:
        raise GrammarSourceError(
            f"{GRAMMAR_FILE} must define step-calls once with exactly one {_CALL_BOUND} call bound"
        )
    if ("root", "root ::= tool-call-array") not in rules:
        raise GrammarSourceError(f"{GRAMMAR_FILE} must define 'root ::= tool-call-array' (array-only root)")
    return tuple(rules)


def _final_call(name: str, text_arg: str | None) -> str:
    args = "object" if text_arg is None else f'"{{" ws {json_string_literal(text_arg)} ws ":" ws string ws "}}"'
    return (f'"{{" ws {json_string_literal("tool")} ws ":" ws {json_string_literal(name)} ws "," ws '
            f'{json_string_literal("args")} ws ":" ws {args} ws "}}"')


def _root_rule(profile: ModelProfile) -> str:
    if not profile.has_reasoning:
        return "root ::= tool-call-array"
    parts = []
    if profile.reasoning_open_emitted_by_model:
        # the model writes the open sentinel itself; a prefilled one would switch thinking off
        parts.append(gbnf_string_literal(profile.reasoning_open))
    parts += [profile.reasoning_body_rule, gbnf_string_literal(profile.reasoning_close), "prelude-trail-ws"]
    return "root ::= " + " ".join(parts) + " tool-call-array"


def _reasoning_body_rule(profile: ModelProfile, max_chars: int) -> str:
    """Any text without the close sentinel's first two characters in a row, bounded.

    Forbidding the two-character start (e.g. "</") is stricter than forbidding the whole
    sentinel, but keeps the rule tiny, and the body can then only end at the real close.
    """
    close = profile.reasoning_close
    first = close[0]
    if len(close) == 1:
        unit = gbnf_excluding_class(first)
    else:
        unit = f"{gbnf_excluding_class(first)} | {gbnf_string_literal(first)} {gbnf_excluding_class(close[1] + first)}"
    return f"{profile.reasoning_body_rule} ::= ( {unit} ){{0,{max_chars}}}"


def _checked_tool_names(tool_names: Sequence[str]) -> list[str]:
    if isinstance(tool_names, str):
        raise TypeError("tool_names must be a sequence of names, not one string")
    names: set[str] = set()
    for name in tool_names:
        if not isinstance(name, str) or not name or name != name.strip():
            raise ValueError(
                f"tool name {name!r} cannot go into the grammar: names must be non-empty strings "
                "without surrounding whitespace"
            )
        names.add(name)
    if not names:
        raise ValueError("the tool-call grammar needs at least one tool name; register a tool (reply at least)")
    return sorted(names)
