"""Turn a command line into the text the shell guard inspects.

Obfuscation that the shell undoes before running a command must be undone here too, or
a rule keyed on `rm -rf /` is dodged by `ｒｍ`, `r\u200bm`, `rm${IFS}-rf${IFS}/`,
`$'\\x72m'` or a backslash-newline. Command and process substitutions are lifted out
and inspected as command lines of their own, because they run even inside double quotes.
"""

from __future__ import annotations

import re
import shlex
import unicodedata

SUBSTITUTION_PLACEHOLDER = "__SUBST__"
LITERAL_DOLLAR = "\x01"  # a `$` the shell will not expand (single-quoted or escaped)

_ANSI_CSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_ANSI_OSC = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_ANSI_OTHER = re.compile(r"\x1b[@-Z\\-_]?")
_IFS = re.compile(r"\$\{IFS[^}]*\}|\$IFS(?![A-Za-z0-9_])")
_ANSI_C_QUOTE = re.compile(r"\$'((?:[^'\\]|\\.)*)'", re.DOTALL)
_LOCALE_QUOTE = re.compile(r'\$"')
_OTHER_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _decode_ansi_c(match: re.Match[str]) -> str:
    body = match.group(1)
    try:
        decoded = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError:
        decoded = body
    return shlex.quote(decoded)


def normalise_command(text: str) -> str:
    """The command line as the shell would see it after its own quote/escape processing."""
    text = unicodedata.normalize("NFKC", text)
    # format characters (zero-width space/joiner, BOM, soft hyphen) are invisible in a prompt
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = _ANSI_OSC.sub("", _ANSI_CSI.sub("", text))
    text = _ANSI_OTHER.sub("", text)
    text = text.replace("\\\r\n", "").replace("\\\n", "")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _OTHER_CONTROL.sub(" ", text)
    text = _IFS.sub(" ", text)
    text = _ANSI_C_QUOTE.sub(_decode_ansi_c, text)
    return _LOCALE_QUOTE.sub('"', text)


def _closing_paren(text: str, start: int) -> int:
    """Index of the `)` closing the `(` at `start - 1`; len(text) when unbalanced."""
    depth = 1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def extract_substitutions(text: str) -> tuple[str, list[str]]:
    """(text with every `$(…)`, `<(…)`, `>(…)` and backtick body replaced by a placeholder,
    the bodies). Quoting is ignored on purpose: over-inspecting is the safe direction."""
    bodies: list[str] = []
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            out.append(text[i:i + 2])
            i += 2
            continue
        if ch in "$<>" and text[i + 1:i + 2] == "(" and text[i + 2:i + 3] != "(":
            end = _closing_paren(text, i + 2)
            bodies.append(text[i + 2:end])
            out.append(SUBSTITUTION_PLACEHOLDER)
            i = end + 1
            continue
        if ch == "`":
            end = text.find("`", i + 1)
            end = len(text) if end == -1 else end
            bodies.append(text[i + 1:end])
            out.append(SUBSTITUTION_PLACEHOLDER)
            i = end + 1
            continue
        out.append(ch)
        i += 1
    return "".join(out), bodies


def protect_literal_dollars(text: str) -> str:
    """Mark every `$` the shell leaves alone — inside single quotes, or escaped as `\\$` —
    as LITERAL_DOLLAR, so expansion and substitution extraction skip it exactly as the shell
    would (`sh -c 'rm -rf "$1"' _ x` is expanded by the inner shell, not the outer one).
    `restore_dollars` turns the marks back before a nested command line is judged."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote == "'":
            if ch == "'":
                quote = ""
            out.append(LITERAL_DOLLAR if ch == "$" else ch)
            i += 1
            continue
        if ch == "\\" and i + 1 < len(text):
            if text[i + 1] == "$":
                out.append(LITERAL_DOLLAR)
            else:
                out.append(text[i:i + 2])
            i += 2
            continue
        if ch == "'" and not quote:
            quote = "'"
        elif ch == '"':
            quote = "" if quote == '"' else '"'
        out.append(ch)
        i += 1
    return "".join(out)


def restore_dollars(text: str) -> str:
    return text.replace(LITERAL_DOLLAR, "$")
