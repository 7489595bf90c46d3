"""What a command line carries from one simple command to the next, as the shell would.

Variables (assignments, `export`, `declare`, `unset`, `read`), aliases, the working dir
after a `cd`, function heads (`f () {` — the body is judged as the command it is), and
which substitutions produced the line's unknown parts (decoded bytes, downloads).
"""

from __future__ import annotations

import os
import posixpath
import re
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
    # links an earlier command of the line made: absolute link path -> absolute target
    links: dict[str, str] = attrs.field(factory=dict)


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


def _link_operands(args: tuple[str, ...]) -> tuple[bool, list[str], str | None]:
    """(symbolic, operands, -t directory) of an `ln` command."""
    symbolic, operands, target_dir, skip = False, [], None, False
    for index, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in ("-t", "--target-directory") and index + 1 < len(args):
            target_dir, skip = args[index + 1], True
        elif arg.startswith("--target-directory="):
            target_dir = arg.split("=", 1)[1]
        elif arg.startswith("-t") and len(arg) > 2 and not arg.startswith("--"):
            target_dir = arg[2:]
        elif arg in ("-s", "--symbolic") or (arg.startswith("-") and not arg.startswith("--") and "s" in arg[1:]):
            symbolic = True
        elif arg.startswith("-") and arg != "-":
            continue
        else:
            operands.append(arg)
    return symbolic, operands, target_dir


def remember_link(cmd: SimpleCommand, scope: GuardScope, state: LineState) -> None:
    """`ln -s /dev/sda x` (or `ln /state/.env y`): later words naming `x` mean `/dev/sda`."""
    if cmd.program not in ("ln", "link") or not cmd.args:
        return
    symbolic, operands, target_dir = _link_operands(cmd.args)
    if target_dir is not None:
        pairs = [(o, posixpath.join(target_dir, posixpath.basename(o.rstrip("/")))) for o in operands]
    elif len(operands) == 1:
        pairs = [(operands[0], posixpath.basename(operands[0].rstrip("/")))]
    elif len(operands) >= 2:
        *sources, last = operands
        last_path = resolve_target(last, scope.cwd, scope.home)
        into_dir = len(sources) > 1 or last.endswith("/") or (last_path != UNKNOWN and os.path.isdir(last_path))
        pairs = [(o, posixpath.join(last, posixpath.basename(o.rstrip("/"))) if into_dir else last) for o in sources]
    else:
        return
    for target, name in pairs:
        link = resolve_target(name, scope.cwd, scope.home)
        if link == UNKNOWN:
            continue
        base = posixpath.dirname(link) if symbolic else scope.cwd  # a relative symlink hangs off its own dir
        dest = resolve_target(target, base, scope.home)
        if dest != UNKNOWN:
            state.links[link] = dest


def through_links(word: str, scope: GuardScope, links: dict[str, str]) -> str:
    """`word` with a link made earlier in the line replaced by what it leads to."""
    if not links or word.startswith("-"):
        return word
    key = re.match(r"^[A-Za-z_][\w-]*=", word)  # `of=x` (dd): the value is the path
    if key:
        return key.group(0) + through_links(word[key.end():], scope, links)
    path = resolve_target(word, scope.cwd, scope.home)
    if path == UNKNOWN:
        return word
    for _ in range(8):  # a chain of links, not a loop
        for link, dest in links.items():
            if path == link or path.startswith(link.rstrip("/") + "/"):
                path = dest + path[len(link):]
                break
        else:
            break
    return path if path != resolve_target(word, scope.cwd, scope.home) else word


def next_cwd(cmd: SimpleCommand, scope: GuardScope) -> str:
    if not cmd.args:
        return scope.home
    target = cmd.args[-1]
    if target == "-" or is_unknown(target):
        return UNKNOWN
    return resolve_target(target, scope.cwd, scope.home)
