"""EmbeddingUnavailable: the one error an embedding call raises; callers degrade, never crash."""

from __future__ import annotations


class EmbeddingUnavailable(Exception):
    """No vectors this time: nothing configured, the daemon is down, or it answered badly.

    Hybrid recall treats this as "lexical only for now"; it is never fatal to a turn.
    `status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, provider_id: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.provider_id = provider_id
        self.status = status
