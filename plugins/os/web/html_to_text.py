"""HTML to Markdown or plain text with the stdlib parser (no heavy dependency).

Good enough for reading a page: headings, paragraphs, lists, links, code blocks, tables
as pipe rows; scripts, styles and page chrome (nav, footer, forms) dropped.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({"script", "style", "noscript", "svg", "template", "iframe", "head", "nav", "footer", "form",
                   "button", "select", "canvas"})
_BLOCK = frozenset({"p", "div", "section", "article", "main", "header", "aside", "blockquote", "figure",
                    "figcaption", "dl", "dt", "dd", "table", "ul", "ol", "hr", "address", "details", "summary"})
_VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "area", "base", "col", "embed", "source", "track",
                   "wbr"})


class _Converter(HTMLParser):
    def __init__(self, markdown: bool, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.markdown = markdown
        self.base_url = base_url
        self.out: list[str] = []
        self.skip_depth = 0
        self.pre_depth = 0
        self.list_stack: list[list[int]] = []  # [ordered?, counter]
        self.link_href: str | None = None
        self.link_text: list[str] = []
        self.title: list[str] = []
        self.in_title = False
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    # -- helpers -------------------------------------------------------------------------
    def _emit(self, text: str) -> None:
        if self.cell is not None:
            self.cell.append(text)
        elif self.link_href is not None:
            self.link_text.append(text)
        else:
            self.out.append(text)

    def _newline(self, count: int = 1) -> None:
        if self.cell is None and self.link_href is None:
            self.out.append("\n" * count)

    # -- parser callbacks ----------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            if tag not in _VOID:
                self.skip_depth += 1
            return
        if self.skip_depth:
            return
        attr = dict(attrs)
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._newline(2)
            if self.markdown:
                self._emit("#" * int(tag[1]) + " ")
        elif tag in _BLOCK:
            self._newline(2 if tag in ("p", "table", "blockquote") else 1)
            if tag == "ul":
                self.list_stack.append([0, 0])
            elif tag == "ol":
                self.list_stack.append([1, 0])
            elif tag == "blockquote" and self.markdown:
                self._emit("> ")
            elif tag == "hr" and self.markdown:
                self._emit("---\n")
        elif tag == "li":
            self._newline()
            depth = max(len(self.list_stack) - 1, 0)
            marker = "-"
            if self.list_stack and self.list_stack[-1][0]:
                self.list_stack[-1][1] += 1
                marker = f"{self.list_stack[-1][1]}."
            self._emit("  " * depth + (marker if self.markdown else "•") + " ")
        elif tag == "br":
            self._emit("\n")
        elif tag == "pre":
            self.pre_depth += 1
            self._newline(2)
            if self.markdown:
                self._emit("```\n")
        elif tag == "code" and not self.pre_depth and self.markdown:
            self._emit("`")
        elif tag in ("strong", "b") and self.markdown:
            self._emit("**")
        elif tag in ("em", "i") and self.markdown:
            self._emit("*")
        elif tag == "a" and attr.get("href") and self.cell is None and self.link_href is None:
            self.link_href = urljoin(self.base_url, attr["href"] or "")
            self.link_text = []
        elif tag == "img" and attr.get("alt"):
            self._emit(f"![{attr['alt']}]" if self.markdown else attr["alt"] or "")
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skip_depth = max(0, self.skip_depth - 1)
            return
        if self.skip_depth:
            return
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._newline(2)
        elif tag in ("ul", "ol"):
            if self.list_stack:
                self.list_stack.pop()
            self._newline()
        elif tag in _BLOCK:
            self._newline(2 if tag in ("p", "table", "blockquote") else 1)
        elif tag == "pre":
            self.pre_depth = max(0, self.pre_depth - 1)
            if self.markdown:
                self._emit("\n```")
            self._newline(2)
        elif tag == "code" and not self.pre_depth and self.markdown:
            self._emit("`")
        elif tag in ("strong", "b") and self.markdown:
            self._emit("**")
        elif tag in ("em", "i") and self.markdown:
            self._emit("*")
        elif tag == "a" and self.link_href is not None:
            text = re.sub(r"\s+", " ", "".join(self.link_text)).strip()
            href, self.link_href = self.link_href, None
            if self.markdown and text and href.startswith(("http://", "https://")):
                self._emit(f"[{text}]({href})")
            else:
                self._emit(text)
        elif tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row.append(re.sub(r"\s+", " ", "".join(self.cell)).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            row, self.row = self.row, None
            if any(row):
                self.out.append(("| " + " | ".join(row) + " |" if self.markdown else "\t".join(row)) + "\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self.skip_depth:
            return
        if self.pre_depth:
            self._emit(data)
        else:
            self._emit(re.sub(r"\s+", " ", data))


def html_to_text(html: str, markdown: bool = True, base_url: str = "") -> tuple[str, str]:
    """(title, body text) of an HTML document; `markdown` False gives plain text."""
    converter = _Converter(markdown, base_url)
    converter.feed(html)
    converter.close()
    text = "".join(converter.out)
    lines = [line.rstrip() for line in text.split("\n")]
    cleaned = "\n".join(lines)
    cleaned = re.sub(r"\n[ \t]+\n", "\n\n", cleaned)
    cleaned = re.sub(r"\n{3,}", "\n\n", cleaned).strip()
    title = re.sub(r"\s+", " ", "".join(converter.title)).strip()
    return title, cleaned
