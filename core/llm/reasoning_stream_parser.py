"""Split a streamed completion into reasoning and content pieces as the chunks arrive.

This is "channel B" of reasoning capture: the inline `<think>...</think>` or
`<|channel>thought ... <channel|>` block, recognised client-side. A sentinel may be split
across chunks, so text that could still be the start of a sentinel is held back until the
next chunk (or `finish()`) decides it. The reasoning block is a prelude: once content has
started, nothing later is treated as reasoning.
"""

from __future__ import annotations

import enum

from atomic_agent.llm.model_profile import ModelProfile

Piece = tuple[str, str]  # ("reasoning" | "content", text)
REASONING = "reasoning"
CONTENT = "content"


class _State(enum.Enum):
    AWAIT_OPEN = "await_open"  # the model may still open its reasoning block
    REASONING = "reasoning"
    CONTENT = "content"


def _held_back_length(text: str, sentinel: str) -> int:
    """Length of the longest end of `text` that is a proper start of `sentinel`."""
    for length in range(min(len(text), len(sentinel) - 1), 0, -1):
        if text.endswith(sentinel[:length]):
            return length
    return 0


class ReasoningStreamParser:
    """Incremental reasoning/content splitter for one completion.

    `pre_opened=True` means the prompt prefilled the open sentinel (qwen-think), so the
    stream starts inside the reasoning block; with False (gemma4-think) the open sentinel
    is detected in the stream. For a profile without reasoning everything is content.
    """

    def __init__(self, profile: ModelProfile, pre_opened: bool) -> None:
        self._open = profile.reasoning_open.rstrip()  # tolerate other whitespace after the tag
        self._close = profile.reasoning_close
        if not profile.has_reasoning:
            self._state = _State.CONTENT
        else:
            self._state = _State.REASONING if pre_opened else _State.AWAIT_OPEN
        self._pending = ""
        self._reasoning: list[str] = []
        self._content: list[str] = []
        self._closed = False
        self._finished = False

    @property
    def reasoning(self) -> str:
        """All reasoning text emitted so far."""
        return "".join(self._reasoning)

    @property
    def content(self) -> str:
        """All content text emitted so far."""
        return "".join(self._content)

    @property
    def reasoning_closed(self) -> bool:
        """Whether the close sentinel has been seen."""
        return self._closed

    def feed(self, chunk: str) -> list[Piece]:
        """The pieces this chunk settles, in stream order (may be empty)."""
        if self._finished:
            raise RuntimeError("ReasoningStreamParser.feed called after finish(); use a new parser per completion")
        pieces: list[Piece] = []
        text = self._pending + chunk
        self._pending = ""
        if self._state is _State.AWAIT_OPEN:
            text = self._consume_await_open(text)
        if self._state is _State.REASONING and text:
            text = self._consume_reasoning(text, pieces)
        if self._state is _State.CONTENT and text:
            self._emit(pieces, CONTENT, text)
        return pieces

    def finish(self) -> list[Piece]:
        """Flush held-back text: an unfinished sentinel is just text of the current kind."""
        if self._finished:
            return []
        self._finished = True
        pieces: list[Piece] = []
        if self._pending:
            kind = REASONING if self._state is _State.REASONING else CONTENT
            self._emit(pieces, kind, self._pending)
            self._pending = ""
        return pieces

    def _consume_await_open(self, text: str) -> str:
        lead = text.lstrip()
        if lead.startswith(self._open):
            # whitespace before the block is noise, not content
            self._state = _State.REASONING
            return lead[len(self._open):]
        if not lead or self._open.startswith(lead):
            self._pending = text
            return ""
        self._state = _State.CONTENT
        return text

    def _consume_reasoning(self, text: str, pieces: list[Piece]) -> str:
        end = text.find(self._close)
        if end >= 0:
            self._emit(pieces, REASONING, text[:end])
            self._state = _State.CONTENT
            self._closed = True
            return text[end + len(self._close):]
        keep = _held_back_length(text, self._close)
        self._emit(pieces, REASONING, text[: len(text) - keep])
        self._pending = text[len(text) - keep:]
        return ""

    def _emit(self, pieces: list[Piece], kind: str, text: str) -> None:
        if not text:
            return
        (self._reasoning if kind == REASONING else self._content).append(text)
        if pieces and pieces[-1][0] == kind:
            pieces[-1] = (kind, pieces[-1][1] + text)
        else:
            pieces.append((kind, text))
