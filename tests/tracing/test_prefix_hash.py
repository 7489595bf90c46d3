"""The stable prefix reaches a trace only as its salted hash; the salt is per state dir."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from atomic_agent.tracing import trace_events as ev
from atomic_agent.tracing.prefix_hash import hash_prefix, load_or_create_salt, read_salt, salt_path
from atomic_agent.tracing.trace_events import prompt_captured_fields
from atomic_agent.tracing.trace_paths import SaltFileError
from atomic_agent.tracing.trace_recorder import TraceRecorder

PREFIX = "You are the operator agent. PERSONA-MARKER-7f3a. Tools: os.fs.read ..."
TAIL = "### conversation\nuser: list my files\n"


def test_stable_prefix_stored_only_as_salted_hash(tmp_path: Path):
    salt = load_or_create_salt(tmp_path)
    fields = prompt_captured_fields(stable_prefix=PREFIX, tail=TAIL, salt=salt, total_tokens=120,
                                    stable_prefix_tokens=100, tail_tokens=20, estimated=True, slot_id=0,
                                    cache_reused=True)
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        recorder.record(ev.PROMPT_CAPTURED, **fields)
        with pytest.raises(ValueError, match="stable prefix"):
            recorder.record(ev.PROMPT_CAPTURED, stablePrefix=PREFIX, **fields)
    text = recorder.path.read_text(encoding="utf-8")
    assert "PERSONA-MARKER-7f3a" not in text
    event = json.loads(text)
    assert event["stablePrefixHash"] == hashlib.sha256((salt + PREFIX).encode()).hexdigest()
    assert event["stablePrefixHash"] != hashlib.sha256(PREFIX.encode()).hexdigest()
    assert event["tail"] == TAIL
    assert event["tokens"] == {"total": 120, "stablePrefix": 100, "tail": 20, "estimated": True}
    assert event["slotId"] == 0 and event["cacheReused"] is True


def test_salt_is_created_once_with_mode_0600(tmp_path: Path):
    assert read_salt(tmp_path) is None
    salt = load_or_create_salt(tmp_path)
    assert len(salt) == 32 and int(salt, 16) >= 0
    assert load_or_create_salt(tmp_path) == salt
    assert stat.S_IMODE(os.stat(salt_path(tmp_path)).st_mode) == 0o600
    assert [p.name for p in salt_path(tmp_path).parent.iterdir()] == [".salt"]  # no temp file left


def test_different_state_dirs_hash_the_same_prefix_differently(tmp_path: Path):
    a, b = load_or_create_salt(tmp_path / "a"), load_or_create_salt(tmp_path / "b")
    assert hash_prefix(PREFIX, a) != hash_prefix(PREFIX, b)
    assert hash_prefix(PREFIX, a) == hash_prefix(PREFIX, a)


def test_damaged_salt_file_says_how_to_recover(tmp_path: Path):
    load_or_create_salt(tmp_path)
    salt_path(tmp_path).write_text("not hex")
    with pytest.raises(SaltFileError, match="Delete it"):
        load_or_create_salt(tmp_path)
