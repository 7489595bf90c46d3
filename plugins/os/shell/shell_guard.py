"""The shell guard: inspect a command before the approval gate ever sees it.

It runs on what will really execute — a direct-exec argv, or the full line handed to
`sh -c` — after undoing the obfuscations the shell itself undoes, and walks into every
nested command line (`bash -c`, `su -c`, `eval`, `$(…)`, backticks, `<(…)`). Hardline
hits block at every level; dangerous hits are named in the approval prompt.
"""

from __future__ import annotations

import attrs

from .command_normalise import extract_substitutions, normalise_command
from .command_segments import ParsedLine, split_argv, split_segments
from .command_unwrap import CODE_INTERPRETERS, SHELL_INTERPRETERS, SimpleCommand, inline_code, unwrap
from .dangerous_rules import downloader_in, dangerous_hits
from .guard_paths import UNKNOWN, resolve_target
from .guard_records import DANGEROUS, HARDLINE, ORDINARY, GuardScope, GuardVerdict, RuleHit
from .hardline_rules import fork_bomb, hardline_hits

MAX_NESTING = 4
# binaries whose name says nothing about what they will run: never a session-grant shape
_OPAQUE = SHELL_INTERPRETERS | frozenset({"eval", "exec", "source", ".", "xargs", "busybox"})


@attrs.define
class _Findings:
    hard: list[RuleHit] = attrs.field(factory=list)
    danger: list[RuleHit] = attrs.field(factory=list)
    commands: list[SimpleCommand] = attrs.field(factory=list)
    nested: bool = False


def _analyse_text(text: str, scope: GuardScope, depth: int, found: _Findings) -> None:
    normalised = normalise_command(text)
    found.hard += fork_bomb(normalised)
    stripped, bodies = extract_substitutions(normalised)
    parsed = split_segments(stripped)
    if parsed.parse_error:
        found.danger.append(RuleHit("dangerous.unparsed", f"the command line does not parse ({parsed.parse_error})"))
    _analyse_segments(parsed, scope, depth, found)
    if bodies:
        found.nested = True
        if downloader_in(bodies) and any(c.program in SHELL_INTERPRETERS or c.program in CODE_INTERPRETERS
                                         for c in found.commands):
            found.danger.append(RuleHit("dangerous.download_and_run", "a download substituted into an interpreter"))
        for body in bodies:
            _nested(body, scope, depth, found)


def _nested(code: str, scope: GuardScope, depth: int, found: _Findings) -> None:
    found.nested = True
    if depth + 1 > MAX_NESTING:
        found.danger.append(RuleHit("dangerous.deep_nesting", "command lines nested too deep to inspect"))
        return
    _analyse_text(code, scope, depth + 1, found)


def _next_cwd(cmd: SimpleCommand, scope: GuardScope) -> str:
    if not cmd.args:
        return scope.home
    target = cmd.args[-1]
    if target == "-":
        return UNKNOWN
    return resolve_target(target, scope.cwd, scope.home)


def _analyse_segments(parsed: ParsedLine, scope: GuardScope, depth: int, found: _Findings) -> None:
    cwd = scope.cwd
    local: list[SimpleCommand] = []
    for segment in parsed.segments:
        cmd = unwrap(segment.words)
        here = attrs.evolve(scope, cwd=cwd)
        upstream = local[segment.piped_from] if segment.piped_from is not None else None
        found.hard += hardline_hits(cmd, segment, here)
        found.danger += dangerous_hits(cmd, segment, here, upstream)
        code = inline_code(cmd) or cmd.su_command
        if cmd.program == "eval":
            code = " ".join(cmd.args)
        if code:
            _nested(code, here, depth, found)
        if cmd.program in ("cd", "pushd"):
            cwd = _next_cwd(cmd, here)
        local.append(cmd)
        found.commands.append(cmd)


def _dedupe(hits: list[RuleHit]) -> tuple[RuleHit, ...]:
    seen: dict[str, RuleHit] = {}
    for hit in hits:
        seen.setdefault(hit.rule, hit)
    return tuple(seen.values())


def _shape(found: _Findings, top_level: int) -> str | None:
    if found.nested or top_level != 1 or len(found.commands) != 1:
        return None
    cmd = found.commands[0]
    if not cmd.program or cmd.wrappers or cmd.program in _OPAQUE:
        return None
    if any(h.rule == "dangerous.inline_code" for h in found.danger):
        return None
    return cmd.program


def _verdict(found: _Findings, top_level: int) -> GuardVerdict:
    if found.hard:
        return GuardVerdict(HARDLINE, _dedupe(found.hard + found.danger), None)
    if found.danger:
        # a shape grant ("allow all git") must not silence `git push --force` or `echo >> ~/.bashrc`
        return GuardVerdict(DANGEROUS, _dedupe(found.danger), None)
    return GuardVerdict(ORDINARY, (), _shape(found, top_level))


def inspect_line(line: str, scope: GuardScope) -> GuardVerdict:
    """Judge a command line that will run under `sh -c`."""
    found = _Findings()
    _analyse_text(line, scope, 0, found)
    stripped, _ = extract_substitutions(normalise_command(line))
    return _verdict(found, len(split_segments(stripped).segments))


def inspect_argv(argv: list[str], scope: GuardScope) -> GuardVerdict:
    """Judge a direct-exec argv: one simple command, nothing in it is an operator."""
    found = _Findings()
    words = [normalise_command(w) for w in argv]
    parsed = split_argv(words)
    _analyse_segments(parsed, scope, 0, found)
    return _verdict(found, len(parsed.segments))


def guard_scope(cwd: str, session_cwd: str, home: str) -> GuardScope:
    return GuardScope(cwd=cwd, session_cwd=session_cwd, home=home or "/")

