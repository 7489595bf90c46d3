"""What a command line carries from one simple command to the next, as the shell would.

Variables (assignments, `export`, `declare`, `unset`, `read`), aliases, the working dir
after a `cd`, function heads (`f () {` — the body is judged as the command it is), and
which substitutions produced the line's unknown parts (decoded bytes, downloads).
"""

from __future__ import annotations

import shlex

import attrs

from .command_segments import Segment
from .command_unwrap import SimpleCommand
from .guard_paths import UNKNOWN, resolve_target
from .guard_records import GuardScope
from .shell_words import ShellVars, expand_word, is_unknown

DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
READERS = frozenset({"read", "mapfile", "readarray", "getopts"})


@attrs.define
class LineState:
    """One command line being judged: its scope, variables, aliases and substitutions."""

    scope: GuardScope
    depth: int
    vars: ShellVars
    kinds: set[str] = attrs.field(factory=set)  # "decode" / "download" inside its substitutions
    aliases: dict[str, str] = attrs.field(factory=dict)
    expand: bool = True  # False for a direct-exec argv: no shell reads its words


def strip_function_head(words: tuple[str, ...]) -> tuple[str, ...]:
    """`f () { body` -> `{ body`: the body is judged as the command it is."""
    if len(words) >= 2 and words[1] == "()":
        return words[2:]
    if len(words) >= 3 and words[0] == "function":
        rest = words[2:]
        return rest[1:] if rest[:1] == ("()",) else rest
    return words


def alias_expanded(words: tuple[str, ...], state: LineState) -> tuple[str, ...]:
    for index, word in enumerate(words):
        if "=" in word and not word.startswith("="):
            continue  # a leading assignment
        body = state.aliases.get(word)
        if body is None:
            return words
        try:
            replacement = tuple(shlex.split(body))
        except ValueError:
            replacement = tuple(body.split())
        return (*words[:index], *replacement, *words[index + 1:])
    return words


def expanded_redirects(segment: Segment, state: LineState) -> tuple[tuple[str, str], ...]:
    if not state.expand:
        return segment.redirects
    out = []
    for op, target in segment.redirects:
        for value in expand_word(target, state.vars):
            out.append((op, value))
    return tuple(out)


def remember(cmd: SimpleCommand, state: LineState) -> None:
    """What a command changes for the rest of the line: variables and aliases."""
    def assign(word: str) -> None:
        name, _, value = word.partition("=")
        if name.endswith("+"):
            state.vars.assign(name[:-1], (None,))
        else:
            state.vars.assign(name, (value,))

    if not cmd.program:
        for word in cmd.assignments:
            assign(word)
    elif cmd.program in DECLARERS:
        for word in cmd.args:
            if "=" in word and not word.startswith("-"):
                assign(word)
    elif cmd.program == "unset":
        for word in cmd.args:
            if not word.startswith("-"):
                state.vars.assign(word, ("",))
    elif cmd.program in READERS:
        for word in cmd.args:
            if word.isidentifier():
                state.vars.assign(word, (None,))
    elif cmd.program == "alias":
        for word in cmd.args:
            name, eq, body = word.partition("=")
            if eq:
                state.aliases[name] = body


def next_cwd(cmd: SimpleCommand, scope: GuardScope) -> str:
    if not cmd.args:
        return scope.home
    target = cmd.args[-1]
    if target == "-" or is_unknown(target):
        return UNKNOWN
    return resolve_target(target, scope.cwd, scope.home)
