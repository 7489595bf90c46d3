"""The status bar: model and provider, slot and cache reuse when known, the last prompt's
tokens, the approval level, the session, the queue, and what Enter does mid-turn."""

from __future__ import annotations

import attrs
from rich.text import Text
from textual.widgets import Static

from atomic_agent.api import approval_gate


@attrs.define
class StatusFacts:
    model: str = "?"
    provider: str = "?"
    slot: int | None = None
    cache_tokens: int | None = None  # prompt tokens reused from the slot's cache
    prompt_tokens: int | None = None  # prompt tokens evaluated anew
    level: int = 1
    session: str | None = None
    queued: int = 0
    busy: bool = False
    mode: str = "steer"
    paused: bool = False
    mouse: bool = True


def status_text(facts: StatusFacts) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {facts.model}", style="bold")
    text.append(f" · {facts.provider}")
    if facts.slot is not None:
        text.append(f" · slot {facts.slot}")
    if facts.prompt_tokens is not None or facts.cache_tokens is not None:
        text.append(f" · prompt {facts.prompt_tokens or 0} new/{facts.cache_tokens or 0} cached")
    level_style = "bold red" if facts.level == 5 else ""
    if facts.level:  # 0: attached to serve, whose runtime holds the level
        text.append(" · ")
        text.append(f"level {facts.level} {approval_gate.LEVEL_NAMES.get(facts.level, '')}", style=level_style)
    text.append(f" · {facts.session[:12] if facts.session else 'new session'}")
    if facts.queued:
        text.append(f" · {facts.queued} queued{' (paused)' if facts.paused else ''}", style="bold yellow")
    if facts.busy:
        text.append(f" · working, ⏎ {facts.mode}", style="bold cyan")
    if not facts.mouse:
        text.append(" · mouse off")
    return text


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $text; }
    """

    def show(self, facts: StatusFacts) -> None:
        self.update(status_text(facts))
