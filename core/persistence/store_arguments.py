"""Argument checks shared by every store implementation, so bad input gets the same clear
error whichever backend is behind the protocol."""

from __future__ import annotations

from typing import Any


def check_limit(limit: Any) -> int | None:
    if limit is None:
        return None
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive int or None, got {limit!r}")
    return limit


def check_seq(seq: Any, what: str) -> int | None:
    if seq is None:
        return None
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise ValueError(f"{what} must be a non-negative int or None, got {seq!r}")
    return seq


def check_kv_value(value: Any, key: str) -> None:
    if value is None:
        raise ValueError(f"the value for key {key!r} is None; None means 'absent' in the key-value space, "
                         "so delete the key (claim it) or store an explicit JSON value instead")
