"""The per-provider retry budget: 429 and 5xx (and failed connections) are retried, waiting
what the vendor's Retry-After asks for. A wait longer than `max_wait_s` is not worth it:
the error goes straight up, so the fallback chain can move to another provider."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .http_errors import OpenAiHttpError

T = TypeVar("T")
BACKOFF_S = 0.5
NOT_RETRIED_TYPES = frozenset({"insufficient_quota"})  # spent credit does not come back in a second


def is_retryable(err: OpenAiHttpError) -> bool:
    if err.error_type in NOT_RETRIED_TYPES:
        return False
    if err.status is None:
        return not err.timed_out  # our own timeout: another full wait is not a retry, it is a stall
    return err.status == 429 or err.status >= 500


async def send_with_retry(send: Callable[[], Awaitable[T]], retries: int, max_wait_s: float,
                          sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                          backoff_s: float = BACKOFF_S) -> T:
    attempt = 0
    while True:
        try:
            return await send()
        except OpenAiHttpError as err:
            if attempt >= retries or not is_retryable(err):
                raise
            wait = err.retry_after_s if err.retry_after_s is not None else backoff_s * (2 ** attempt)
            if wait > max_wait_s:
                raise
            await sleep(wait)
            attempt += 1
