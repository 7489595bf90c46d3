"""Refuse a nested transaction on the same store from the same task.

The store has one writer; a second `transaction()` opened while the first is still open in the
same task would wait for the first to finish, which it never does. A task spawned from inside
a transaction may open its own: it simply waits its turn.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar, Token
from typing import Any

from atomic_agent.persistence.persistence_errors import TransactionMisuseError

# (store identity, owning task, handle with a `finished` flag)
_OPEN: ContextVar[tuple[tuple[Any, Any, Any], ...]] = ContextVar("atomic_agent_open_transactions", default=())


def enter_transaction(identity: Any, handle: Any) -> Token[tuple[tuple[Any, Any, Any], ...]]:
    task = asyncio.current_task()
    for open_identity, open_task, open_handle in _OPEN.get():
        if open_identity == identity and open_task is task and not open_handle.finished:
            raise TransactionMisuseError(
                "a transaction is already open on this store in this task; opening another would wait "
                "for itself. Pass the open transaction down and do the work inside it")
    return _OPEN.set(_OPEN.get() + ((identity, task, handle),))


def leave_transaction(token: Token[tuple[tuple[Any, Any, Any], ...]]) -> None:
    try:
        _OPEN.reset(token)
    except ValueError:  # exited from another context (a different task); the handle is finished anyway
        pass
