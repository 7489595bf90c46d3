"""A narrow markdown subset to Telegram HTML, with a tag and a link-scheme allowlist.

Headings become bold; **bold**, *italic* / _italic_, ~~strike~~, `code`, fenced code
blocks, [links](url), list bullets and > quotes are understood. Every other character is
text and is HTML-escaped (<, >, &). Only the tags in ALLOWED_TAGS are ever emitted, and a
link becomes <a> only when its scheme is in ALLOWED_SCHEMES; anything else stays literal
text. An unbalanced delimiter stays literal, so a chunk cut in the middle of a bold run
degrades to text instead of a broken tag.
"""

from __future__ import annotations

import html
import re

ALLOWED_TAGS = frozenset({"b", "i", "u", "s", "code", "pre", "a", "blockquote"})
ALLOWED_SCHEMES = ("http://", "https://", "tg://", "mailto:")

_FENCE = re.compile(r"^```[^\n`]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
_INLINE = re.compile(
    r"`(?P<code>[^`\n]+)`"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<href>[^)\s]+)\)"
    r"|\*\*(?P<bold>[^\n]+?)\*\*"
    r"|~~(?P<strike>[^\n]+?)~~"
    r"|(?<![\w*])\*(?P<star>[^*\n]+?)\*(?![\w*])"
    r"|(?<![\w_])_(?P<under>[^_\n]+?)_(?![\w_])"
)
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")


def _tag(name: str, inner: str, attrs: str = "") -> str:
    if name not in ALLOWED_TAGS:  # the allowlist is enforced where tags are made
        return inner
    return f"<{name}{attrs}>{inner}</{name}>"


def safe_href(href: str) -> bool:
    return href.lower().startswith(ALLOWED_SCHEMES)


def _inline(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[pos:match.start()], quote=False))
        pos = match.end()
        if match.group("code") is not None:
            out.append(_tag("code", html.escape(match.group("code"), quote=False)))
        elif match.group("label") is not None:
            href = match.group("href")
            if safe_href(href):
                out.append(_tag("a", _inline(match.group("label")), f' href="{html.escape(href, quote=True)}"'))
            else:
                out.append(html.escape(match.group(0), quote=False))
        elif match.group("bold") is not None:
            out.append(_tag("b", _inline(match.group("bold"))))
        elif match.group("strike") is not None:
            out.append(_tag("s", _inline(match.group("strike"))))
        else:
            out.append(_tag("i", _inline(match.group("star") or match.group("under") or "")))
    out.append(html.escape(text[pos:], quote=False))
    return "".join(out)


def _lines(text: str) -> str:
    out: list[str] = []
    quote: list[str] = []

    def flush_quote() -> None:
        if quote:
            out.append(_tag("blockquote", "\n".join(quote)))
            quote.clear()

    for line in text.split("\n"):
        if line.startswith(">"):
            quote.append(_inline(line[1:].lstrip()))
            continue
        flush_quote()
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        if heading:
            out.append(_tag("b", _inline(heading.group(1).strip())))
        elif bullet:
            out.append(f"{bullet.group(1)}• {_inline(bullet.group(2))}")
        else:
            out.append(_inline(line))
    flush_quote()
    return "\n".join(out)


def markdown_to_html(text: str) -> str:
    """Telegram HTML for `text` (see the module docstring)."""
    out: list[str] = []
    pos = 0
    for fence in _FENCE.finditer(text):
        out.append(_lines(text[pos:fence.start()]))
        out.append(_tag("pre", html.escape(fence.group(1).rstrip("\n"), quote=False)))
        pos = fence.end()
    out.append(_lines(text[pos:]))
    return "".join(out)
