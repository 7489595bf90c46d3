"""The markdown subset to Telegram HTML (locked invariant 9: only allowlisted tags and link
schemes are ever emitted; everything else is escaped text)."""

from __future__ import annotations

import html.parser

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_agent.plugins.telegram.markdown_html import ALLOWED_TAGS, markdown_to_html

from .fake_bot_api import html_problem


class _Tags(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(text)
    return parser.tags


def test_the_subset_maps_to_telegram_tags() -> None:
    out = markdown_to_html("# Title\n**b** *i* _i2_ ~~s~~ `c<d`\n- item\n> quoted\n```\nx < y\n```")
    assert out == ("<b>Title</b>\n<b>b</b> <i>i</i> <i>i2</i> <s>s</s> <code>c&lt;d</code>\n• item\n"
                   "<blockquote>quoted</blockquote>\n<pre>x &lt; y</pre>")


def test_links_keep_only_allowed_schemes() -> None:
    assert markdown_to_html("[site](https://example.org/?a=1&b=2)") == \
        '<a href="https://example.org/?a=1&amp;b=2">site</a>'
    assert markdown_to_html("[x](tg://resolve?domain=a)").startswith('<a href="tg://')
    assert markdown_to_html("[x](mailto:a@b.c)").startswith('<a href="mailto:')
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,<b>"):
        out = markdown_to_html(f"[click]({bad})")
        assert "<a" not in out and "click" in out


def test_raw_html_from_the_model_is_escaped_not_obeyed() -> None:
    out = markdown_to_html('<script>alert(1)</script> <b onclick="x">hi</b> & done')
    assert tags_of(out) == []
    assert "&lt;script&gt;" in out and "&amp; done" in out


def test_unbalanced_markdown_stays_literal_text() -> None:
    for text in ("**open bold", "a *b", "`tick", "~~s", "[label](http://x", "```\nunclosed fence"):
        out = markdown_to_html(text)
        assert html_problem(out) is None
        assert tags_of(out) == []


MARKDOWN_BITS = st.sampled_from(["**", "*", "_", "~~", "`", "```\n", "[", "](", ")", "# ", "- ", "> ", "\n",
                                 "<", ">", "&", "a", "b c", "https://x.y", "javascript:x", "é", "\U0001F600", '"'])


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKDOWN_BITS, max_size=40).map("".join))
def test_invariant_9_html_conversion_is_tag_allowlisted(text: str) -> None:
    out = markdown_to_html(text)
    assert html_problem(out) is None, out  # Telegram's parser accepts it
    for tag, attrs in tags_of(out):
        assert tag in ALLOWED_TAGS
        if tag == "a":
            assert (attrs.get("href") or "").startswith(("http://", "https://", "tg://", "mailto:"))
        else:
            assert attrs == {}
