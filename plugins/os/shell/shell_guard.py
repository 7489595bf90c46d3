"""The shell guard: parse what will run, then judge it, before the approval gate sees it.

It runs on what will really execute — a direct-exec argv, or the full line handed to
`sh -c` — after undoing the obfuscations the shell itself undoes. It then does the
shell's own work as far as it can be known: variables are expanded (assignments in the
line, `for` lists, the child's exact environment; unset ones are empty), brace lists
multiplied out, aliases replaced by their bodies, function bodies read, wrappers peeled
(`sudo`, `env -S`, `chroot`, `setpriv`, `runuser`, `strace`, `timeout`, `xargs`, ...),
`find -exec` commands judged with `{}` standing for the start paths, and every nested
command line (`bash -c`, `su -c`, `eval`, `$(…)`, backticks, `<(…)`, text piped into a
shell) is judged the same way, recursively.

Verdicts: hardline (blocked at every level, before the gate), undecidable (the effect
depends on something only known when it runs — a download, decoded or generated code,
an argument from a substitution that could make a hardline rule fire: asks at every
level, 5 included), dangerous (asks below level 5, the rule named), ordinary.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from .command_normalise import (
    SUBSTITUTION_PLACEHOLDER,
    extract_substitutions,
    normalise_command,
    protect_literal_dollars,
    restore_dollars,
)
from .command_segments import ParsedLine, Segment, split_argv, split_segments
from .command_unwrap import (
    CODE_INTERPRETERS,
    SHELL_INTERPRETERS,
    UNKNOWN_ARG,
    SimpleCommand,
    inline_code,
    inline_code_args,
    reads_script_from_stdin,
    script_operand,
    unwrap,
)
from .dangerous_rules import dangerous_hits
from .find_exec import find_exec_commands, find_start_paths
from .guard_paths import resolve_target
from .guard_records import DANGEROUS, HARDLINE, ORDINARY, UNDECIDABLE, GuardScope, GuardVerdict, RuleHit
from .hardline_rules import fork_bomb, hardline_hits
from .line_state import (
    LineState,
    alias_expanded,
    expanded_redirects,
    next_cwd,
    remember,
    remember_link,
    strip_function_head,
    through_links,
)
from .pipeline_rules import body_kinds, inline_code_hits, literal_output, producers, stdin_code_hits
from .secret_reach import heredoc_hits, secret_hits
from .shell_words import ShellVars, expand_word, expand_words, is_unknown
from .worst_case import worst_case_hits

MAX_NESTING = 6
# binaries whose name says nothing about what they will run: never a session-grant shape
_OPAQUE = SHELL_INTERPRETERS | frozenset({"eval", "exec", "source", ".", "xargs", "busybox", "alias", "find"})


@attrs.define
class _Findings:
    hard: list[RuleHit] = attrs.field(factory=list)
    undecidable: list[RuleHit] = attrs.field(factory=list)
    danger: list[RuleHit] = attrs.field(factory=list)
    commands: list[SimpleCommand] = attrs.field(factory=list)
    nested: bool = False


def _analyse_text(text: str, scope: GuardScope, depth: int, found: _Findings, vars: ShellVars,
                  inherited: frozenset[str] = frozenset()) -> None:
    normalised = protect_literal_dollars(normalise_command(text))
    found.hard += fork_bomb(normalised)
    found.undecidable += heredoc_hits(normalised, scope)
    stripped, bodies = extract_substitutions(normalised)
    parsed = split_segments(stripped)
    if parsed.parse_error:
        found.danger.append(RuleHit("dangerous.unparsed", f"the command line does not parse ({parsed.parse_error})"))
    state = LineState(scope, depth, vars, set(inherited) | (body_kinds(bodies) if bodies else set()))
    _analyse_segments(parsed, state, found)
    for body in bodies:
        _nested(body, scope, depth, found, vars.child())


def _nested(code: str, scope: GuardScope, depth: int, found: _Findings, vars: ShellVars,
            kinds: frozenset[str] = frozenset()) -> None:
    """Judge a command line found inside another; `kinds` says what produced its unknown parts."""
    found.nested = True
    if depth + 1 > MAX_NESTING:
        found.undecidable.append(RuleHit("undecidable.deep_nesting", "command lines nested too deep to inspect"))
        return
    _analyse_text(restore_dollars(code), scope, depth + 1, found, vars, kinds)


def _analyse_segments(parsed: ParsedLine, state: LineState, found: _Findings) -> None:
    cwd = state.scope.cwd
    local: list[SimpleCommand] = []
    piped: list[int | None] = []
    outside_function: list[tuple[tuple[str, ...], ...] | None] = []  # positional params to restore at `}`
    for segment in parsed.segments:
        stripped = strip_function_head(segment.words)
        if stripped is not segment.words:  # a function body: $1.. are whatever a later call passes
            outside_function.append(state.vars.positional)
            state.vars.positional = None
        if outside_function and segment.words[:1] == ("}",):
            state.vars.positional = outside_function.pop()
        words = alias_expanded(stripped, state)
        here = attrs.evolve(state.scope, cwd=cwd)
        if words[:1] in (("for",), ("select",)) and len(words) >= 2:
            values = [v for w in words[3:] for v in expand_word(w, state.vars)] if words[2:3] == ("in",) else []
            state.vars.assign(words[1], tuple(values) or (None,))
            local.append(SimpleCommand("", ()))
            piped.append(segment.piped_from)
            continue
        if state.expand:
            combos, cut = expand_words(words, state.vars)
            if cut:
                found.undecidable.append(RuleHit("undecidable.expansion", "too many ways the words expand to judge"))
        else:
            combos = [words]
        redirects = expanded_redirects(segment, state)
        upstream = local[segment.piped_from] if segment.piped_from is not None else None
        first: SimpleCommand | None = None
        for combo in combos or [()]:
            cmd = unwrap(tuple(combo))
            first = first or cmd
            expanded = Segment(tuple(combo), redirects, segment.piped_from)
            _judge(cmd, expanded, here, state, found, upstream, local, piped)
        assert first is not None
        local.append(first)
        piped.append(segment.piped_from)
        found.commands.append(first)
        for combo in combos:
            remember(unwrap(tuple(combo)), state)
            remember_link(unwrap(tuple(combo)), here, state)
        if first.program in ("cd", "pushd"):
            cwd = next_cwd(first, here)


def _dynamic(state: LineState, what: str) -> tuple[list[RuleHit], list[RuleHit]]:
    """(hard, undecidable) for code or a program name only known when it runs."""
    if "decode" in state.kinds:
        return [RuleHit("hardline.decode_and_execute", f"{what} comes from decoded bytes")], []
    if "download" in state.kinds:
        return [], [RuleHit("undecidable.download_and_execute", f"{what} comes from a download")]
    return [], [RuleHit("undecidable.dynamic_command", f"{what} is only known when the line runs")]


def _judge(cmd: SimpleCommand, segment: Segment, here: GuardScope, state: LineState, found: _Findings,
           upstream: SimpleCommand | None, local: list[SimpleCommand], piped: list[int | None]) -> None:
    if is_unknown(cmd.raw_program) or SUBSTITUTION_PLACEHOLDER in cmd.raw_program:
        hard, unsure = _dynamic(state, "the program to run")
        found.hard += hard
        found.undecidable += unsure
        return
    if cmd.stdin_args and upstream is not None and (text := literal_output(upstream)) is not None:
        cmd = attrs.evolve(cmd, args=(*cmd.args[:-1], *restore_dollars(text).split()))  # `echo / | xargs rm -rf`
    if state.links:  # `ln -s /dev/sda x && dd of=x`: the rules judge what the link leads to
        cmd = attrs.evolve(cmd, args=tuple(through_links(a, here, state.links) for a in cmd.args))
        segment = attrs.evolve(segment, redirects=tuple((op, through_links(t, here, state.links))
                                                        for op, t in segment.redirects))
    hard = hardline_hits(cmd, segment, here)
    found.hard += hard
    secret_hard, secret_unsure = secret_hits(cmd, segment, here)
    found.hard += secret_hard
    found.undecidable += secret_unsure
    found.danger += dangerous_hits(cmd, segment, here, upstream)
    if not hard:
        found.undecidable += worst_case_hits(cmd, segment, here)
    _code_inside(cmd, segment, here, state, found, upstream, local, piped)


def _code_inside(cmd: SimpleCommand, segment: Segment, here: GuardScope, state: LineState, found: _Findings,
                 upstream: SimpleCommand | None, local: list[SimpleCommand], piped: list[int | None]) -> None:
    code = inline_code(cmd)
    if cmd.program == "eval":
        code = " ".join(cmd.args)
    if code is not None:
        if not code.replace(UNKNOWN_ARG, "").replace(SUBSTITUTION_PLACEHOLDER, "").strip() and code.strip():
            hard, unsure = _dynamic(state, f"the code {cmd.program} runs")
            found.hard += hard
            found.undecidable += unsure
        child = state.vars.child()
        if cmd.program != "eval":
            child.positional = tuple(tuple(expand_word(a, state.vars)) for a in inline_code_args(cmd)) or None
        _nested(code.replace(UNKNOWN_ARG, SUBSTITUTION_PLACEHOLDER), here, state.depth, found, child,
                frozenset(state.kinds))
    for nested in cmd.nested:
        _nested(nested, here, state.depth, found, state.vars.child(), frozenset(state.kinds))
    if cmd.program == "alias":  # the body runs wherever the name is used later
        for word in cmd.args:
            name, eq, body = word.partition("=")
            if eq and body:
                _nested(body, here, state.depth, found, state.vars.child(), frozenset(state.kinds))
    flags = CODE_INTERPRETERS.get(cmd.program, ())
    for index, arg in enumerate(cmd.args):
        if arg in flags and index + 1 < len(cmd.args):
            found.hard += inline_code_hits(cmd.args[index + 1], cmd.program)
    for inner in find_exec_commands(cmd):
        starts = [resolve_target(s, here.cwd, here.home) for s in find_start_paths(cmd)]
        for start in starts:
            for stand_in in (start, start.rstrip("/") + "/*"):
                words = tuple(w.replace("{}", stand_in) for w in inner)
                if state.depth + 1 <= MAX_NESTING:
                    found.nested = True
                    _judge(unwrap(words), Segment(words), here, attrs.evolve(state, depth=state.depth + 1), found,
                           None, local, piped)
    script = script_operand(cmd)
    if script is not None and (is_unknown(script) or SUBSTITUTION_PLACEHOLDER in script):
        hard, unsure = _dynamic(state, f"the script {cmd.program} runs")  # `bash <(curl …)`, `source <(…)`
        found.hard += hard
        found.undecidable += unsure
    if reads_script_from_stdin(cmd):
        here_strings = [t for op, t in segment.redirects if op == "<<<"]
        for text in here_strings:
            if is_unknown(text) or SUBSTITUTION_PLACEHOLDER in text:
                hard, unsure = _dynamic(state, f"the code piped into {cmd.program}")
                found.hard += hard
                found.undecidable += unsure
            else:
                _nested(text, here, state.depth, found, state.vars.child(), frozenset(state.kinds))
        if upstream is not None:
            chain = producers(len(local), [*local, cmd], [*piped, segment.piped_from])
            hard, unsure, literal = stdin_code_hits(chain, cmd.program)
            found.hard += hard
            found.undecidable += unsure
            if literal is not None:
                _nested(literal, here, state.depth, found, state.vars.child())


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
        return GuardVerdict(HARDLINE, _dedupe(found.hard + found.undecidable + found.danger), None)
    if found.undecidable:
        return GuardVerdict(UNDECIDABLE, _dedupe(found.undecidable + found.danger), None)
    if found.danger:
        # a shape grant ("allow all git") must not silence `git push --force` or `echo >> ~/.bashrc`
        return GuardVerdict(DANGEROUS, _dedupe(found.danger), None)
    return GuardVerdict(ORDINARY, (), _shape(found, top_level))


def _vars(scope: GuardScope) -> ShellVars:
    top = (("sh",),)  # `sh -c LINE` gets no arguments: $1.. are empty, $0 is the shell
    if scope.environment is None:  # other names unknown, but the home dir is the scope's
        return ShellVars(None, {"HOME": (scope.home,)}, top)
    return ShellVars({**scope.environment, "HOME": scope.environment.get("HOME", scope.home)}, positional=top)


def inspect_line(line: str, scope: GuardScope) -> GuardVerdict:
    """Judge a command line that will run under `sh -c`."""
    found = _Findings()
    _analyse_text(line, scope, 0, found, _vars(scope))
    stripped, _ = extract_substitutions(normalise_command(line))
    return _verdict(found, len(split_segments(stripped).segments))


def inspect_argv(argv: list[str], scope: GuardScope) -> GuardVerdict:
    """Judge a direct-exec argv: one simple command, nothing in it is an operator or expanded."""
    found = _Findings()
    words = [normalise_command(w) for w in argv]
    parsed = split_argv(words)
    _analyse_segments(parsed, LineState(scope, 0, _vars(scope), expand=False), found)
    return _verdict(found, len(parsed.segments))


def guard_scope(cwd: str, session_cwd: str, home: str, environment: Mapping[str, str] | None = None,
                secrets: tuple[str, ...] = ()) -> GuardScope:
    """`environment`: the child's exact environment (unset names are then known to be empty);
    `secrets`: the runtime's secret paths (`runtime_secrets.secret_roots` of its state dirs)."""
    return GuardScope(cwd=cwd, session_cwd=session_cwd, home=home or "/",
                      environment=dict(environment) if environment is not None else None, secrets=secrets)
