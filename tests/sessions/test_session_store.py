"""sessions.sqlite specifics: corrupt files refused with a clear message, idempotent migrations.

The contract every backend keeps (round trip, append-only transcript, delete, unknown
sessions) is checked by the conformance suite, test_session_database_conformance*.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionStore, SessionStoreError


def test_corrupt_database_is_refused_with_a_clear_message_and_left_untouched(tmp_path: Path):
    path = tmp_path / "sessions.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(SessionStoreError, match="left untouched.*doctor --move-aside sessions.sqlite"):
        SessionStore(tmp_path)
    assert path.read_bytes() == before


def test_migrations_are_idempotent(tmp_path: Path):
    SessionStore(tmp_path).close()
    store = SessionStore(tmp_path)
    names = [r[0] for r in store.conn.execute("select name from _migrations")]
    from atomic_agent.sessions.session_schema import MIGRATIONS

    assert names == [m.__name__ for m in MIGRATIONS]  # each applied once, in order
