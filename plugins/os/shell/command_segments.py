"""Split a normalised command line into simple commands joined by operators.

`ls; rm -rf build`, `git status && curl x | sh` and a newline-separated script are all
several commands; every one is inspected. Redirections are kept apart from the words so
`> /dev/sda` is seen as a write target, not an argument.
"""

from __future__ import annotations

import shlex

import attrs

SEPARATORS = {";", "&", "&&", "||", "|", "|&", "(", ")", ";;", ";&", ";;&"}
PIPES = {"|", "|&"}
WRITE_REDIRECTS = {">", ">>", ">|", "&>", "&>>", ">&", "<>", "1>", "2>"}
READ_REDIRECTS = {"<", "<<", "<<<", "<&"}


@attrs.frozen
class Segment:
    """One simple command: its words, its redirections, and whether it reads from a pipe."""

    words: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()
    piped_from: int | None = None  # index of the segment whose output feeds this one


@attrs.frozen
class ParsedLine:
    segments: tuple[Segment, ...]
    parse_error: str | None = None


def _tokens(text: str) -> tuple[list[str], str | None]:
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.commenters = ""  # keep `# …` text visible to the rules; the shell's view is narrower
    lexer.whitespace_split = True
    try:
        return list(lexer), None
    except ValueError as exc:
        # unbalanced quotes: inspect a quote-stripped word split so the rules still see the words
        fallback = text.replace("'", " ").replace('"', " ").replace("\n", " ; ")
        lexer = shlex.shlex(fallback, posix=True, punctuation_chars=True)
        lexer.commenters = ""
        lexer.whitespace_split = True
        return list(lexer), str(exc)


def split_segments(text: str) -> ParsedLine:
    tokens, error = _tokens(text)
    segments: list[Segment] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    piped_from: int | None = None
    pending_pipe = False
    i = 0

    def flush() -> None:
        nonlocal words, redirects, piped_from
        if words or redirects:
            segments.append(Segment(tuple(words), tuple(redirects), piped_from))
        words, redirects, piped_from = [], [], None

    while i < len(tokens):
        tok = tokens[i]
        if tok in SEPARATORS:
            had_words = bool(words or redirects)
            flush()
            pending_pipe = tok in PIPES and had_words
            i += 1
            continue
        if tok in WRITE_REDIRECTS or tok in READ_REDIRECTS:
            target = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1] not in SEPARATORS else ""
            redirects.append((tok, target))
            i += 2 if target else 1
            continue
        if pending_pipe and not words:
            piped_from = len(segments) - 1
            pending_pipe = False
        words.append(tok)
        i += 1
    flush()
    return ParsedLine(tuple(segments), error)


def split_argv(argv: list[str]) -> ParsedLine:
    """A direct-exec argv is exactly one simple command: nothing in it is an operator."""
    return ParsedLine((Segment(tuple(argv)),) if argv else ())
