"""The conversation: the user's messages, each turn's step feed, and replies as Markdown.

Only what the chat orchestrator tells it is shown here; the view never touches the runtime.
It follows the newest line unless the person scrolled up to read something.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Markdown, Static

from atomic_agent.plugins.tui.feed_lines import FeedLine, safe_text
from atomic_agent.plugins.tui.step_feed import StepFeed


class UserBubble(Static):
    DEFAULT_CSS = """
    UserBubble { margin: 1 0 0 0; padding: 0 1; background: $boost; color: $text; }
    """


class ChatNotice(Static):
    DEFAULT_CSS = """
    ChatNotice { padding: 0 1; color: $text-muted; }
    ChatNotice.-error { color: $error; }
    ChatNotice.-warning { color: $warning; }
    """


class ReplyView(Markdown):
    DEFAULT_CSS = """
    ReplyView { margin: 0 0 0 1; }
    """


class ChatView(VerticalScroll):
    DEFAULT_CSS = """
    ChatView { height: 1fr; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.feed: StepFeed | None = None
        self._follow_pending = False

    def _follow(self) -> None:
        """Scroll to the end after the next refresh, once however many lines arrived meanwhile;
        only when the view was at (or next to) the bottom, so reading back is not interrupted."""
        if self._follow_pending or self.max_scroll_y - self.scroll_y > 2:
            return
        self._follow_pending = True

        def scroll() -> None:
            self._follow_pending = False
            self.scroll_end(animate=False, immediate=True)

        self.call_after_refresh(scroll)

    def _mount_following(self, widget: object) -> None:
        self._follow()
        self.mount(widget)  # type: ignore[arg-type]

    def add_user(self, text: str, how: str = "") -> None:
        shown = text if len(text) <= 4000 else text[:4000] + f" … [{len(text) - 4000} more characters]"
        label = f"you{f' ({how})' if how else ''}: "
        self._mount_following(UserBubble(label + safe_text(shown), markup=False))

    def begin_turn(self) -> StepFeed:
        self.feed = StepFeed()
        self._mount_following(self.feed)
        return self.feed

    def add_line(self, line: FeedLine) -> None:
        feed = self.feed or self.begin_turn()
        self._follow()
        feed.add(line)

    def add_reasoning(self, delta: str) -> None:
        (self.feed or self.begin_turn()).add_reasoning(delta)

    def add_reply(self, markdown: str) -> None:
        self._mount_following(ReplyView(markdown))
        self.feed = None

    def add_notice(self, text: str, severity: str = "information") -> None:
        notice = ChatNotice(text, markup=False)
        if severity in ("error", "warning"):
            notice.add_class(f"-{severity}")
        self._mount_following(notice)
