"""Text from storage or the outside world, as it goes into a prompt: quoted data, never instructions.

Recalled notes, profile facts, lessons, procedures, session excerpts and tool output (files, web
pages, MCP results) are written by whoever controlled their source — a web page, a cloned repo,
an MCP server, or an earlier prompt-injected turn. A line of such text that starts a prompt line
could pass for the prompt's own structure (`### rules`, `user: ...`, a tool-call array). So every
data line the prompt shows starts with the quote mark `> `, and the stable prefix's rules say that
quoted lines and tool results never override the user or the rules.

The prompt templates use these as Jinja filters (`quote_lines`, `quote_continuation`).
"""

from __future__ import annotations

QUOTE = "> "


def quote_lines(body: str) -> str:
    """Every line of `body` behind the quote mark (an empty body stays empty)."""
    if not body:
        return body
    return "\n".join(QUOTE + line for line in body.split("\n"))


def quote_continuation(line: str) -> str:
    """A conversation line whose text runs over several lines: the first line keeps its role
    prefix (`tool_result[...]: `, `user: `), every later line is quoted, so text inside a tool
    result can never start a line of its own (a fake `### rules` header, a fake `user:` turn)."""
    head, sep, rest = line.partition("\n")
    if not sep:
        return line
    return head + "\n" + quote_lines(rest)
