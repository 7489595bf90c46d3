"""A reply the token limit cut is continued, not failed.

`llama.maxTokens` (512 by default) bounds one completion, and a long answer — a report a
channel will split into several messages — can need more. When a grammar-transport
completion stops at the limit while writing the text of a `reply` call, the step asks for
the rest: the prompt plus the answer so far, constrained by `grammars/reply-continuation.gbnf`
to more of the same JSON string and the call's closing `"}}]`, on the same slot (the cached
prompt is reused). Up to MAX_CONTINUATIONS times, and only while prompt, answer and the
next completion fit the slot's context (by the server's own token counts when it gives them)
and the server did not stop at the window's edge. A reply that fills the window is closed
where it stopped, with a note saying so (WINDOW_CUT_NOTE). Anything else cut by the limit (a working call's
arguments, reasoning) stays the model failure it was. The grammar's own bound on the
reply's string (tool-call.gbnf) still holds across the pieces.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING

import attrs

from atomic_agent.llm.provider_protocol import Completion, CompletionRequest

if TYPE_CHECKING:
    from atomic_agent.prompt.build_prompt import BuiltPrompt

MAX_CONTINUATIONS = 8
GRAMMAR_FILE = "reply-continuation.gbnf"
# what tool-call.gbnf's final-call makes of a reply, up to the opening quote of its text (ws is one optional space)
_REPLY_OPEN = re.compile(r'\[ ?\{ ?"tool" ?: ?"reply" ?, ?"args" ?: ?\{ ?"text" ?: ?"')
_STRING_BOUND = re.compile(r'^string ::= "\\"" char\{0,(\d+)\} "\\""$', re.MULTILINE)
# one grammar `char` of a JSON string: an escape, or any other character
_CHAR = re.compile(r'\\u[0-9a-fA-F]{4}|\\["\\/bfnrt]|[^"\\]')
# an escape the limit cut in half: dropped, so the continuation writes it whole
_CUT_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{0,3})?$')

Complete = Callable[[CompletionRequest, Callable[[str], None] | None], Awaitable[Completion]]


@functools.cache
def _rules() -> str:
    text = resources.files("atomic_agent.grammars").joinpath(GRAMMAR_FILE).read_text(encoding="utf-8")
    return "\n".join(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#"))


def open_reply_text(content: str) -> tuple[str, str] | None:
    """(the answer to continue from, the reply text in it) when `content` is a reply call cut
    inside its text — the text as raw JSON string content, a half-written escape at its end
    dropped; else None."""
    match = _REPLY_OPEN.match(content)
    if match is None:
        return None
    body = _CUT_ESCAPE.sub("", content[match.end():])
    if _CHAR.sub("", body) != "":  # an unescaped quote: the string was closed, the cut is elsewhere
        return None
    return content[:match.end()] + body, body


def continuation_grammar(grammar: str, written: str) -> str | None:
    """The grammar for the rest of a reply whose text so far is `written`; None when the
    step's grammar has no string bound to honour, or the bound is used up."""
    bound = _STRING_BOUND.search(grammar)
    if bound is None:
        return None
    left = int(bound.group(1)) - len(_CHAR.findall(written))
    if left <= 0:
        return None
    return f"root ::= char{{0,{left}}} reply-close\n{_rules()}\n"


async def continue_cut_reply(complete: Complete, request: CompletionRequest, prompt: BuiltPrompt,
                             completion: Completion, on_delta: Callable[[str], None] | None, n_ctx: int | None,
                             count_tokens: Callable[[str], int],
                             on_piece: Callable[[Completion, int], None] | None = None) -> Completion:
    """`completion` as it was, or joined with its continuation when it was a reply cut by the
    token limit (see the module docstring)."""
    if request.grammar is None:
        return completion  # native tools: the provider returns whole calls or nothing
    pieces = 0
    last = completion  # the latest piece as the server answered it: its token counts are exact
    while completion.stop_type == "limit" and pieces < MAX_CONTINUATIONS:
        found = open_reply_text(completion.content)
        if found is None:
            break
        if last.truncated:  # the server stopped at the window's edge: nothing more fits
            return _closed_at_window(completion, found[0])
        kept, written = found
        grammar = continuation_grammar(request.grammar, written)
        text = prompt.text + kept
        if grammar is None:
            break
        if n_ctx and _context_used(last, text, count_tokens) + request.n_predict > n_ctx:
            return _closed_at_window(completion, kept)
        # `parts` stay the step's: a continuation is a step's request (a trace rerun answers it from
        # the recording); a fallback link that reframes from them cannot continue and fails as before
        follow = attrs.evolve(request, prompt=text, grammar=grammar, prefix_length=len(prompt.framed_prefix))
        more = last = await complete(follow, on_delta)
        pieces += 1
        if on_piece is not None:
            on_piece(more, pieces)
        completion = attrs.evolve(
            more, content=kept + more.content, tokens_predicted=completion.tokens_predicted + more.tokens_predicted,
            duration_ms=completion.duration_ms + more.duration_ms, reasoning_content=completion.reasoning_content)
    return completion


WINDOW_CUT_NOTE = " [cut here: the reply filled the model's context window]"


def _closed_at_window(completion: Completion, kept: str) -> Completion:
    """The reply written so far, marked as cut and closed as a whole call: the user gets what
    the model wrote and sees where it stopped, rather than a failed turn that drops it."""
    return attrs.evolve(completion, content=kept + WINDOW_CUT_NOTE + '"}}]', stop=True, stop_type="eos",
                        truncated=False)


def _context_used(last: Completion, text: str, count_tokens: Callable[[str], int]) -> int:
    """Tokens the continuation's prompt fills: the server's own count of the last piece's prompt
    plus what it generated, when it reported them; the estimate of `text` only when it did not
    (the estimate reads code and JSON low, and a continuation grows towards the window's edge)."""
    evaluated = last.tokens_evaluated or last.cache_n + last.prompt_n
    if evaluated and last.tokens_predicted:
        return max(evaluated + last.tokens_predicted, count_tokens(text))
    return count_tokens(text)
