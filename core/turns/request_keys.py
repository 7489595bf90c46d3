"""Idempotency keys: a client's retry of one request gets the original turn, never a second.

A host that lets clients retry (serve's `Idempotency-Key` header) passes a `RequestKey`
with the message; the key is committed in the admission's own transaction, so "the turn
was admitted" and "this key names it" become durable together. A retry with the same key
finds the turn (`TurnRepository.turn_for_key`) instead of admitting another one: before
or after a restart, whichever process answers. The fingerprint (a hash of what the
request asked) tells a retry from a different request that reused the key by mistake.
"""

from __future__ import annotations

import hashlib
import json

import attrs

MAX_KEY_CHARS = 255


@attrs.frozen
class RequestKey:
    key: str
    fingerprint: str  # what the request asked, hashed (request_fingerprint)
    caller_ref: str = ""  # the host's own id for the request (serve: its completion id)

    @classmethod
    def of(cls, key: str, *asked: object, caller_ref: str = "") -> RequestKey:
        """The key for a request that asked `asked` (its text, session, options: anything JSON can hold)."""
        return cls(key, request_fingerprint(*asked), caller_ref)


def steer_key_ref(steer_id: int | str) -> str:
    """The caller_ref a key is stored with when it steered a running turn instead of
    admitting one (a redelivery then finds that turn, and the key follows the steer if it
    becomes a turn of its own)."""
    return f"steer:{int(steer_id)}"


@attrs.frozen
class KeyedTurn:
    """A stored key: the turn it admitted and what the original request asked."""

    key: str
    turn_id: str
    session_id: str
    fingerprint: str
    caller_ref: str


class DuplicateRequestError(Exception):
    """The key already admitted a turn; nothing new was written. `existing` names it."""

    def __init__(self, existing: KeyedTurn) -> None:
        super().__init__(f"the idempotency key {existing.key!r} already admitted turn {existing.turn_id}")
        self.existing = existing


def request_fingerprint(*parts: object) -> str:
    """A stable hash of what a request asked (its text, session, options)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=True).encode()).hexdigest()
