"""What the ingress property tests throw at an ingress: arbitrary text (lone surrogates, NUL,
astral characters, whitespace included) and arbitrary bytes, plus a ledger reader."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hypothesis import strategies as st

HOSTILE = ["\ud800", "\udcff", "\udfff", "\x00", "\ufeff", "\U0001f600", " ", "\n", "é", "\\", '"']
texts = st.lists(st.one_of(st.characters(), st.sampled_from(HOSTILE)), min_size=0, max_size=12).map("".join)
byte_strings = st.binary(min_size=0, max_size=24)


def admitted_texts(state_dir: Path) -> list[str]:
    """Every admitted turn's text, read by a separate connection (what a fresh process sees)."""
    db = state_dir / "sessions.sqlite"
    if not db.exists():
        return []
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute("select text from turns order by admitted_order")]
    except sqlite3.OperationalError:  # the ledger table is made on first use
        return []
    finally:
        conn.close()


def session_count(state_dir: Path) -> int:
    db = state_dir / "sessions.sqlite"
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("select count(*) from sessions").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        conn.close()
