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
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
