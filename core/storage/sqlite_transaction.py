"""`with transaction(conn):` — BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error.

Connections run in autocommit mode (isolation_level=None) so transactions are explicit
and a writer takes the write lock up front instead of failing half-way on upgrade.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    if conn.in_transaction:  # nested use joins the outer transaction
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back on its own (a full disk does), and a failed
        # COMMIT leaves the transaction open: end it either way, never twice
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
