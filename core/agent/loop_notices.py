"""The texts the loop detector shows the model (notices, veto) and the user (forced reply)."""

from __future__ import annotations


def format_repeat_notice(tool: str, count: int) -> str:
    """Advisory for the `### notice` section when one call keeps being repeated."""
    times = "once" if count == 1 else f"{count} times"
    return (f"{tool} has already been called {times} this turn with exactly these "
            "arguments. Another identical call will not tell you anything new: use the "
            "results you already have, change the arguments, pick a different tool, or reply.")


def format_veto_instruction(tool: str) -> str:
    """Summary of the synthetic result that replaces a vetoed call."""
    return (f"Not run: {tool} was called again with the same arguments after returning the "
            "same result several times in a row. Change approach: call a different tool, "
            "use different arguments, or reply with what you already know.")


def format_wandering_redirect(tool: str, spread: int) -> str:
    """Redirect for the `### notice` section when a tool probes target after target."""
    return (f"You have tried {spread} different targets with {tool} this turn without "
            "settling on an answer. Stop probing new URLs or pages: run a web search to find "
            "the right address, or reply now with a best-effort answer from what you found.")


def format_batch_repeat_notice(size: int, times: int) -> str:
    """Advisory when the same multi-call batch is emitted on consecutive steps."""
    return (f"The last {times} steps each issued the same batch of {size} tool calls in the "
            "same order. Repeating the batch will not change its results: build on them, "
            "change the calls, or reply.")


def forced_loop_reply(detector: str | None = None) -> str:
    """The reply that ends a turn gracefully when the loop breaker trips.

    Recorded as a normal assistant reply: the turn succeeded in stopping itself, so it
    is never reported as a failure.
    """
    if detector == "wandering":
        return ("I stopped here: I tried many different pages and addresses without finding "
                "what I was looking for, and more guessing would not help. If you can point "
                "me to the exact URL or source, or narrow the question, I'll pick it up from there.")
    return ("I stopped here: I was repeating the same tool calls and getting the same results, "
            "so more attempts would not make progress. Tell me how you'd like to proceed, or "
            "give me more detail (an exact path, URL or command) and I'll take a different approach.")
