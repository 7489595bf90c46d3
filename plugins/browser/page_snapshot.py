"""The world snapshot: the page walked to compact text (page_walk.js) and capped.

The text opens with the page's title and address, then one line per visible semantic node:
role, quoted name, and a ref (`[e12]`) for each element a tool can act on. It is capped at
`agent.worldSnapshotMaxTokens` (estimated) and ends in a `[truncated]` line when cut. Walking
an unchanged page again gives the same bytes: refs live on the elements, nothing volatile
(time, scroll position, focus) is shown.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import attrs

from atomic_agent.api import estimate_tokens

TRUNCATED = "[truncated]"
MAX_NAME_CHARS = 100  # a control's or heading's name
MAX_TEXT_CHARS = 400  # one run of text (a paragraph)
CHARS_PER_TOKEN = 3.6  # what estimate_tokens reads; the walk stops near the cap, the lines then fit it exactly


@attrs.frozen
class PageSnapshot:
    text: str
    raw_chars: int  # the page's serialized DOM, for the compression ratio (0 unless measured)
    nodes: int  # DOM nodes the walk visited
    truncated: bool
    refs: int  # elements the model can act on


@cache
def walk_script() -> str:
    return resources.files(__package__).joinpath("page_walk.js").read_text(encoding="utf-8")


def cap_lines(lines: list[str], max_tokens: int) -> tuple[list[str], bool]:
    out: list[str] = []
    used = estimate_tokens(TRUNCATED) + 1
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            return [*out, TRUNCATED], True
        out.append(line)
        used += cost
    return out, False


def header(title: str, url: str) -> str:
    return f"page {json.dumps(title[:MAX_NAME_CHARS], ensure_ascii=False)} at {url[:300]}"


async def take_snapshot(page: Any, max_tokens: int, measure: bool = False) -> PageSnapshot:
    """Walk `page` (a Playwright page) into a capped snapshot. A navigation that replaces the
    document during the walk (a page's own redirect) is waited out and walked again, once.
    `measure` also serializes the DOM for `raw_chars` (0 otherwise: it costs on a big page)."""
    from playwright.async_api import Error as PlaywrightError

    walk_args = {"maxChars": int(max_tokens * CHARS_PER_TOKEN), "maxNameChars": MAX_NAME_CHARS,
                 "maxTextChars": MAX_TEXT_CHARS, "measure": measure}
    try:
        walked = await page.evaluate(walk_script(), walk_args)
    except PlaywrightError as exc:
        if "context was destroyed" not in str(exc) and "navigat" not in str(exc):
            raise
        try:
            await page.wait_for_load_state("load")
        except PlaywrightError:
            pass
        walked = await page.evaluate(walk_script(), walk_args)
    lines = [header(await page.title(), page.url), *walked["lines"]]
    if len(lines) == 1:
        lines.append("(the page shows no text or controls)")
    capped, cut = cap_lines(lines, max_tokens)
    if walked["truncated"] and not cut:
        capped, cut = [*capped, TRUNCATED], True
    text = "\n".join(capped)
    return PageSnapshot(text=text, raw_chars=int(walked["rawChars"]), nodes=int(walked["nodes"]), truncated=cut,
                        refs=text.count(" [e"))
