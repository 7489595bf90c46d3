"""Expand the words of a shell command line the way the shell will, as far as it can be known.

The guard judges targets, so `d=/; rm -rf $d`, `rm -rf ${X:-/}`, `rm -rf $UNSET/` (an unset
variable is empty, so that is `rm -rf /`) and `rm -rf /{bin,usr}` must reach the rules as
the paths they become. A word's expansion is a set of candidates: a variable assigned
twice in the line may hold either value, a `for` loop variable each of its words. What
cannot be known before the command runs — the output of a command substitution, `read`,
positional parameters outside `sh -c … args`, `$RANDOM` — becomes UNKNOWN_ARG inside the
candidate, and the guard then asks what the worst case would do.

Variables not assigned in the line come from the child's environment (the filtered tool
environment, known exactly); a name in neither is unset and expands to nothing.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping

import attrs

from .command_normalise import SUBSTITUTION_PLACEHOLDER
from .command_unwrap import UNKNOWN_ARG

MAX_CANDIDATES = 32
# set by the shell itself, never from the environment: their value is not known here
SHELL_OWNED = frozenset({"RANDOM", "SECONDS", "LINENO", "PPID", "BASHPID", "OLDPWD", "REPLY", "OPTARG", "OPTIND",
                         "BASH_COMMAND", "EPOCHSECONDS", "EPOCHREALTIME", "SRANDOM", "HISTCMD", "PIPESTATUS", "_"})
_PARAM = re.compile(r"\$(?:\{(?P<braced>[^{}]*)\}|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<special>[0-9@*#?$!\-]))")
_ARITH = re.compile(r"\$\(\((?:[^()]|\([^()]*\))*\)\)")
_BRACED_DEFAULT = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*|[0-9]+)(?P<op>:?[-=+?])(?P<word>.*)$", re.DOTALL)
_BRACE_LIST = re.compile(r"\{([^{},]*(?:,[^{},]*)+)\}")


@attrs.define
class ShellVars:
    """Variables as the line has set them so far: name -> candidate values (None = unknown)."""

    environment: Mapping[str, str] | None  # None: the child's environment is not known
    assigned: dict[str, tuple[str | None, ...]] = attrs.field(factory=dict)
    positional: tuple[tuple[str, ...], ...] | None = None  # $0, $1, ... candidates when known

    def values(self, name: str) -> tuple[str | None, ...]:
        if name in self.assigned:
            return self.assigned[name]
        if name in SHELL_OWNED:
            return (None,)
        if name == "PWD":
            return (None,)
        if self.environment is None:
            return (None,)
        return (self.environment.get(name, ""),)

    def assign(self, name: str, candidates: tuple[str | None, ...], *, union: bool = True) -> None:
        previous = self.assigned.get(name, ()) if union else ()
        merged = tuple(dict.fromkeys([*previous, *candidates]))
        self.assigned[name] = merged[:MAX_CANDIDATES]

    def child(self) -> ShellVars:
        """What a nested shell sees: unexported assignments may or may not reach it, so both."""
        merged = {}
        for name, values in self.assigned.items():
            env_value: tuple[str | None, ...] = (None,) if self.environment is None else (
                self.environment.get(name, ""),)
            merged[name] = tuple(dict.fromkeys([*values, *env_value]))
        return ShellVars(self.environment, merged)


def _param_values(match: re.Match[str], vars: ShellVars) -> tuple[str | None, ...]:
    if match.group("name"):
        return vars.values(match.group("name"))
    special = match.group("special")
    if special is not None:
        if special.isdigit() and vars.positional is not None:
            index = int(special)
            return vars.positional[index] if index < len(vars.positional) else ("",)
        if special in "@*" and vars.positional is not None:
            rest = vars.positional[1:]
            if not rest:
                return ("",)
            if all(len(options) == 1 for options in rest):
                return (" ".join(options[0] for options in rest),)
        if special == "#" and vars.positional is not None:
            return (str(len(vars.positional) - 1),)
        return (None,)
    braced = match.group("braced") or ""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", braced):
        return vars.values(braced)
    if braced.isdigit() and vars.positional is not None:
        index = int(braced)
        return vars.positional[index] if index < len(vars.positional) else ("",)
    found = _BRACED_DEFAULT.match(braced)
    if found:
        name, op, word = found.group("name"), found.group("op"), found.group("word")
        current = vars.values(name) if not name.isdigit() else (None,)
        return tuple(dict.fromkeys(v for value in current for v in _operator(value, op, word, vars)))
    return (None,)  # ${#x}, ${x%y}, ${x/a/b}, ${!x}: computed, not known here


def _operator(value: str | None, op: str, word: str, vars: ShellVars) -> list[str | None]:
    """`${name<op>word}` for one candidate value (None = unknown). An empty value may also be
    an unset one (the environment cannot tell them apart), so both readings are kept."""
    colon = op.startswith(":")
    kind = op[-1]
    if kind in "-=":
        if value is None:
            return [None, *expand_word(word, vars)]
        if value == "":
            return [*expand_word(word, vars)] if colon else ["", *expand_word(word, vars)]
        return [value]
    if kind == "+":
        if value is None:
            return [None, "", *expand_word(word, vars)]
        if value == "":
            return [""] if colon else ["", *expand_word(word, vars)]
        return [*expand_word(word, vars)]
    return [value]  # `?`: the value, or the shell stops with an error


def _braces(word: str) -> list[str]:
    match = _BRACE_LIST.search(word)
    if not match:
        return [word]
    out = []
    for option in match.group(1).split(","):
        out.extend(_braces(word[:match.start()] + option + word[match.end():]))
        if len(out) >= MAX_CANDIDATES:
            break
    return out[:MAX_CANDIDATES]


def _tilde(word: str, vars: ShellVars) -> list[str | None]:
    if word == "~" or word.startswith("~/"):
        return [None if home is None else home + word[1:] for home in vars.values("HOME")]
    return [word]


def expand_word(word: str, vars: ShellVars) -> list[str]:
    """Every string `word` may become; UNKNOWN_ARG marks the parts that cannot be known."""
    word = _ARITH.sub(UNKNOWN_ARG, word)
    pieces: list[list[str]] = []
    position = 0
    for match in _PARAM.finditer(word):
        pieces.append([word[position:match.start()]])
        pieces.append([UNKNOWN_ARG if v is None else v for v in _param_values(match, vars)])
        position = match.end()
    pieces.append([word[position:]])
    results: list[str] = []
    for combo in itertools.product(*pieces):
        joined = "".join(combo).replace(SUBSTITUTION_PLACEHOLDER, UNKNOWN_ARG)
        for braced in _braces(joined):
            for tilde in _tilde(braced, vars):
                results.append(UNKNOWN_ARG if tilde is None else tilde)
        if len(results) >= MAX_CANDIDATES:
            break
    return list(dict.fromkeys(results))[:MAX_CANDIDATES]


def expand_words(words: tuple[str, ...], vars: ShellVars) -> tuple[list[tuple[str, ...]], bool]:
    """(every word tuple the command may run as, whether the list was cut at MAX_CANDIDATES)."""
    options = [expand_word(w, vars) for w in words]
    combos: list[tuple[str, ...]] = []
    for combo in itertools.product(*options):
        combos.append(combo)
        if len(combos) > MAX_CANDIDATES:
            return combos[:MAX_CANDIDATES], True
    return combos, False


def is_unknown(word: str) -> bool:
    return UNKNOWN_ARG in word
